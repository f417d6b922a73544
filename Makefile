# Every target goes through the Maven wrapper, so nothing but a JDK 17 is needed.
MVNW := ./mvnw -B
MANIFESTS := target/kubernetes

.PHONY: run sandbox dev test build deploy bench clean

## With a kubeconfig: the operator in dev mode against that cluster. Without one (or with SANDBOX=1): the sandbox,
## the operator and a scale-down under load in the test world, beside naive deletion (about 2 minutes).
run:
	@if [ -z "$(SANDBOX)" ] && { [ -n "$$KUBECONFIG" ] || [ -f "$$HOME/.kube/config" ]; }; then \
		$(MAKE) --no-print-directory dev; \
	else \
		$(MAKE) --no-print-directory sandbox; \
	fi

## The sandbox of `make run`, whatever kubeconfig there is. The test world reads the CRD the build generates.
sandbox:
	$(MVNW) -q package -DskipTests
	$(MVNW) -q exec:java@sandbox

## Quarkus dev mode, with live reload, against the cluster of the current kubeconfig; applies the generated CRD.
dev:
	@if [ -z "$$KUBECONFIG" ] && [ ! -f "$$HOME/.kube/config" ]; then \
		echo "No kubeconfig found (KUBECONFIG unset and no ~/.kube/config): 'make dev' needs a cluster, e.g. kind."; \
		exit 2; \
	fi
	$(MVNW) quarkus:dev

## The whole test suite: unit tests, then the operator against the mock API server.
test:
	$(MVNW) verify

## Build the JVM application (target/quarkus-app) and the manifests (target/kubernetes).
build:
	$(MVNW) package -DskipTests

## Install the CRD, RBAC and the operator's Deployment into the current cluster.
deploy: build
	kubectl apply -f $(MANIFESTS)/modeldeployments.serving.ebb.dev-v1.yml
	kubectl apply -f $(MANIFESTS)/kubernetes.yml

## Print the benchmark figures the README quotes, Ebb beside naive deletion and a fixed preStop sleep.
bench:
	$(MVNW) -q package -DskipTests
	$(MVNW) -q exec:java@bench

clean:
	$(MVNW) clean
