# Every target goes through the Maven wrapper, so nothing but a JDK 17 is needed.
MVNW := ./mvnw -B
MANIFESTS := target/kubernetes

.PHONY: run dev test build deploy bench clean

## Run the operator in dev mode against the cluster of the current kubeconfig.
run:
	@if [ -z "$$KUBECONFIG" ] && [ ! -f "$$HOME/.kube/config" ]; then \
		echo "No kubeconfig found (KUBECONFIG unset and no ~/.kube/config)."; \
		echo "'make run' starts the operator against a cluster; point KUBECONFIG at one (e.g. a kind cluster)."; \
		exit 2; \
	fi
	$(MVNW) quarkus:dev

## The same as run: Quarkus dev mode, with live reload, applying the generated CRD.
dev: run

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

## Print the benchmark figures (six to eight minutes on 2 cores, most of it the 500-deployment and 200-read runs).
## One alone: ./mvnw -q test-compile exec:java -Dexec.mainClass=dev.ebb.operator.bench.ConcurrentReads
bench:
	$(MVNW) -q test-compile exec:java

clean:
	$(MVNW) clean
