package dev.ebb.operator.sim;

import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.read.ConnectionRead;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Every engine in the test world listens on its own loopback address, while what the operator renders reads 127.0.0.1
 * or, in a follower's hook, its leader's stable name (hostname.subdomain, which the replica's headless Service makes
 * resolvable in a cluster). The world changes a command the operator runs in a Pod in these ways only: the loopback
 * host, after {@code --host} or as the router Envoy hook's admin host, becomes the Pod's own loopback
 * ({@link LoopbackAddresses#loopbackOf}), a peer's name the address of that Pod
 * (the world's stand-in for cluster DNS),
 * and the connection read is told the Pod's own address, since every fake engine shares this machine's connection
 * table where a real Pod has a namespace of its own.
 */
public final class PodAddressing {
    public static final String RENDERED_HOST = EnginePod.LOOPBACK;
    /** The router Envoy's hook (render/LlmDRouterLayout): bash, the script, settle, drain, then the admin host. */
    private static final String ENVOY_DRAIN = "drain-envoy.sh";

    private PodAddressing() {}

    public static List<String> onPodAddress(List<String> argv, String podAddress) {
        return onPodAddress(argv, podAddress, name -> Optional.empty());
    }

    /**
     * @param peerAddress the address a name stands for; a name it gives none for is left as it is
     */
    public static List<String> onPodAddress(
            List<String> argv, String podAddress, Function<String, Optional<String>> peerAddress) {
        List<String> out = new ArrayList<>(argv);
        for (int i = 0; i + 1 < out.size(); i++) {
            if (out.get(i).equals("--host")) {
                String host = out.get(i + 1);
                out.set(
                        i + 1,
                        host.equals(RENDERED_HOST)
                                ? LoopbackAddresses.loopbackOf(podAddress)
                                : peerAddress.apply(host).orElse(host));
            }
        }
        if (out.size() > 4
                && out.get(1).endsWith("/" + ENVOY_DRAIN)
                && out.get(4).equals(RENDERED_HOST)) {
            out.set(4, LoopbackAddresses.loopbackOf(podAddress));
        }
        if (out.contains(ConnectionRead.MAX_PEERS_OPTION) && !out.contains("--local-address")) {
            out.addAll(List.of("--local-address", podAddress));
        }
        return out;
    }
}
