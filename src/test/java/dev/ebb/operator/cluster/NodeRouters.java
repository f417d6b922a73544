package dev.ebb.operator.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.sim.EngineContainer;
import dev.ebb.operator.sim.EngineRuntime;
import dev.ebb.operator.sim.FakeRouter;
import dev.ebb.operator.sim.LoopbackAddresses;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The routers of a {@link ClusterNode}'s router Pods, as its kubelet runs them: each router Pod the real Deployment
 * controller makes and the scheduler binds here runs a fake router of its deployment's kind on the Pod's own address,
 * at the client port the operator rendered; an llm-d Pod's Envoy also serves its admin interface where its envoy.yaml
 * puts it, on the Pod's loopback. At the Pod's deletion the kubelet runs the hooks, then SIGTERM, which each router
 * takes as its release does ({@link RouterContainer}).
 */
final class NodeRouters implements EngineRuntime, AutoCloseable {
    private static final YAMLMapper YAML = new YAMLMapper();
    private final KubernetesClient client;
    private final Map<String, FakeRouter> running = new ConcurrentHashMap<>();

    NodeRouters(KubernetesClient client) {
        this.client = client;
    }

    /** The router in front of one router Pod, once it runs. */
    Optional<FakeRouter> of(Pod routerPod) {
        return Optional.ofNullable(running.get(key(routerPod)));
    }

    @Override
    public Optional<EngineContainer> start(Pod pod, String address) throws IOException {
        String namespace = pod.getMetadata().getNamespace();
        String deployment = pod.getMetadata().getLabels().get(Labels.DEPLOYMENT);
        ModelDeployment md = client.resources(ModelDeployment.class)
                .inNamespace(namespace)
                .withName(deployment)
                .get();
        Optional<RouterKind> kind =
                Optional.ofNullable(md).map(m -> m.getSpec().router()).flatMap(r -> RouterKind.fromWireName(r.name()));
        Optional<Integer> entry = pod.getSpec().getContainers().stream()
                .map(Container::getPorts)
                .filter(ports -> ports != null)
                .flatMap(List::stream)
                .filter(p -> "http".equals(p.getName()))
                .map(ContainerPort::getContainerPort)
                .findFirst();
        if (kind.isEmpty() || entry.isEmpty()) {
            return Optional.empty();
        }
        Optional<InetSocketAddress> proxyAdmin =
                kind.get() == RouterKind.LLM_D_ROUTER ? proxyAdmin(pod, address) : Optional.empty();
        FakeRouter router =
                FakeRouter.inPodOf(client, namespace, deployment, kind.get(), address, entry.get(), proxyAdmin);
        running.put(key(pod), router);
        return Optional.of(new RouterContainer(router, kind.get(), RouterContainer.ownGrace(pod)));
    }

    /** Where the Pod's envoy.yaml puts Envoy's admin interface; its loopback host is the Pod's own loopback here. */
    private Optional<InetSocketAddress> proxyAdmin(Pod pod, String podAddress) throws IOException {
        for (Volume volume : Optional.ofNullable(pod.getSpec().getVolumes()).orElse(List.of())) {
            if (volume.getConfigMap() == null) {
                continue;
            }
            ConfigMap files = client.configMaps()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(volume.getConfigMap().getName())
                    .get();
            String config = Optional.ofNullable(files)
                    .map(ConfigMap::getData)
                    .map(d -> d.get("envoy.yaml"))
                    .orElse(null);
            if (config != null) {
                JsonNode at =
                        YAML.readTree(config).path("admin").path("address").path("socket_address");
                String host = at.path("address").asText();
                return Optional.of(new InetSocketAddress(
                        host.equals("127.0.0.1") ? LoopbackAddresses.loopbackOf(podAddress) : host,
                        at.path("port_value").asInt()));
            }
        }
        return Optional.empty();
    }

    private static String key(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    @Override
    public void close() {
        running.values().forEach(FakeRouter::close);
        running.clear();
    }

    /**
     * A router container as the kubelet signals it, each kind taking SIGTERM as its release was seen to here:
     * Envoy exits at once and cuts what it carries (Envoy 1.36.2, 3 ms); smg answers 503 on /readiness, takes new
     * connections for half its --shutdown-grace-period-secs (180 by default, router_args.py) but at most 5 s, then
     * lets those open finish until that grace and cuts the rest (smg 1.9.0); uvicorn stops listening and lets every
     * response in progress end, with no bound of its own (uvicorn 0.34.0 with production-stack's arguments).
     */
    record RouterContainer(FakeRouter router, RouterKind kind, Duration ownGrace) implements EngineContainer {
        private static final Duration SMG_DEFAULT_GRACE = Duration.ofSeconds(180);
        private static final Duration SMG_MOST_ACCEPTING = Duration.ofSeconds(5);
        private static final Duration UNBOUNDED = Duration.ofDays(1);

        static Duration ownGrace(Pod pod) {
            List<String> args = Optional.ofNullable(
                            pod.getSpec().getContainers().get(0).getArgs())
                    .orElse(List.of());
            int flag = args.indexOf("--shutdown-grace-period-secs");
            return flag >= 0 && flag + 1 < args.size()
                    ? Duration.ofSeconds(Long.parseLong(args.get(flag + 1)))
                    : SMG_DEFAULT_GRACE;
        }

        @Override
        public void sigterm() {
            switch (kind) {
                case LLM_D_ROUTER -> router.close();
                case SGLANG_GATEWAY -> {
                    Duration accepting = ownGrace.dividedBy(2).compareTo(SMG_MOST_ACCEPTING) < 0
                            ? ownGrace.dividedBy(2)
                            : SMG_MOST_ACCEPTING;
                    router.shutDown(accepting, ownGrace.minus(accepting));
                }
                case VLLM_ROUTER -> router.shutDown(Duration.ZERO, UNBOUNDED);
            }
        }

        @Override
        public void kill() {
            router.close();
        }

        @Override
        public boolean exited() {
            return router.stopped();
        }

        @Override
        public boolean answersProbes() {
            return false;
        }
    }
}
