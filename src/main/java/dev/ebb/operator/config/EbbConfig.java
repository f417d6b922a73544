package dev.ebb.operator.config;

import dev.ebb.operator.api.RouterImages;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.time.Duration;
import java.util.Optional;

/** Operator-wide settings, under the {@code ebb.} prefix. */
@ConfigMapping(prefix = "ebb")
public interface EbbConfig {

    /** Images used when neither the role nor spec.engine names one. */
    Images images();

    Retirement retirement();

    LeaderElection leaderElection();

    /**
     * The namespaces to watch, comma-separated; unset or blank for every namespace. The Deployment sets it from OLM's
     * olm.targetNamespaces annotation; {@link WatchNamespacesInterceptor} hands it to the SDK.
     */
    Optional<String> watchNamespaces();

    /** The Lease that lets one operator Pod act at a time; only in the profiles QOSDK elects in (prod). */
    interface LeaderElection {
        @WithDefault("ebb-operator")
        String leaseName();

        /** Defaults to the namespace the operator's client is in: its own Pod's, in a cluster. */
        Optional<String> namespace();

        /** Defaults to the host name, which in a cluster is the Pod's name. */
        Optional<String> identity();
    }

    interface Retirement {
        /** How long an aborted retirement waits before it is retried by itself; refusals are never retried so. */
        @WithDefault("5m")
        Duration coolDown();

        /**
         * Without a router: how long after no EndpointSlice lists a retiring replica a node's kube-proxy may still send
         * it a new connection through the Service. The member's connection table counts only from then on.
         */
        @WithDefault("5s")
        Duration endpointPropagation();

        /**
         * Without a router: how long a retiring member's gauges must read idle and its request counters stand still
         * before the peers still connected to it (a metrics scraper, the kubelet's probes, a mesh's health checks) are
         * taken for bystanders and no longer hold it. A client that sends a request within it moves the counters and
         * starts it over. vLLM and SGLang close a kept connection after 5 s without a request (uvicorn's keep-alive
         * timeout, which both leave at 5 s), so one that stays open longer while no generation arrives carries requests
         * of another kind; the rest covers the spacing of the reads.
         */
        @WithDefault("8s")
        Duration quietPeers();

        /**
         * How many retirements of one ModelDeployment may run at once; 0 lets every leaving replica drain at the same
         * time, so a scale-down by k takes the longest of the k drains rather than their sum.
         */
        @WithDefault("0")
        int maxConcurrent();

        /**
         * Whether a scale-down reads the candidates once and lets the idlest leave; false takes the highest ordinals
         * without reading them.
         */
        @WithDefault("true")
        boolean chooseByLoad();
    }

    interface Images {
        /**
         * vLLM's newest release, 0.33.0, whose image .buildkite/scripts/annotate-release.sh tags vX.Y.Z. Every flag the
         * profile renders and both gauges the drain sums were read in that release's package.
         */
        @WithDefault("vllm/vllm-openai:v0.33.0")
        String vllm();

        /**
         * SGLang's newest release, 0.5.23, whose image its release workflow tags vX.Y.Z on each v* tag. Every flag the
         * profile renders and every gauge the drain sums were read in that release's package.
         */
        @WithDefault("lmsysorg/sglang:v0.5.23")
        String sglang();

        /**
         * llm-d's endpoint picker, as llm-d-router v0.10.0 publishes it
         * (.github/ISSUE_TEMPLATE/new-release.md at v0.10.0 names the released images).
         */
        @WithName("llm-d-router")
        @WithDefault("ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0")
        String llmDRouter();

        /**
         * The Envoy that carries clients' requests beside the picker: the release llm-d-router v0.10.0's standalone
         * chart runs (config/charts/llm-d-router-standalone/values.yaml, presets.envoy.image, distroless-v1.33.2), in
         * Envoy's Ubuntu image of the same release (ci/Dockerfile-envoy, stage envoy, at v1.33.2), whose bash runs the
         * drain hook that holds Envoy's SIGTERM until its streams end; the distroless image has no shell.
         */
        @WithName("llm-d-router-proxy")
        @WithDefault("docker.io/envoyproxy/envoy:v1.33.2")
        String llmDRouterProxy();

        /** The routing proxy in front of direct decoders, released with the picker (same release notes). */
        @WithName("routing-proxy")
        @WithDefault("ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0")
        String routingProxy();

        /** vLLM's production-stack router, the image its Helm chart runs (helm/values.yaml, routerSpec), at vllm-stack-0.1.12. */
        @WithName("vllm-router")
        @WithDefault("lmcache/lmstack-router:v0.1.12")
        String vllmRouter();

        /** SGLang's model gateway (smg), at release 1.9.0 (docker/Dockerfile at v1.9.0 builds it). */
        @WithName("sglang-gateway")
        @WithDefault("lightseekorg/smg:1.9.0")
        String sglangGateway();

        /** What a router of this kind runs; llm-d's router alone uses the proxy images. */
        default RouterImages of(RouterKind kind) {
            String router = switch (kind) {
                case LLM_D_ROUTER -> llmDRouter();
                case VLLM_ROUTER -> vllmRouter();
                case SGLANG_GATEWAY -> sglangGateway();
            };
            return new RouterImages(router, llmDRouterProxy(), routingProxy());
        }

        default String of(Engine engine) {
            return switch (engine) {
                case VLLM -> vllm();
                case SGLANG -> sglang();
            };
        }
    }
}
