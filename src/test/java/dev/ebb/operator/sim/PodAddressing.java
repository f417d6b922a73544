package dev.ebb.operator.sim;

import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.read.ConnectionRead;
import java.util.ArrayList;
import java.util.List;

/**
 * Every engine in the test world listens on its own loopback address, while what the operator renders always
 * reads 127.0.0.1. The world changes a command the operator runs in a Pod in two ways only: that one argv item, and
 * the connection read is told the Pod's own address, since every fake engine shares this machine's connection table
 * where a real Pod has a namespace of its own.
 */
public final class PodAddressing {
    public static final String RENDERED_HOST = DrainHook.LOOPBACK;

    private PodAddressing() {
    }

    public static List<String> onPodAddress(List<String> argv, String podAddress) {
        List<String> out = new ArrayList<>(argv);
        for (int i = 0; i + 1 < out.size(); i++) {
            if (out.get(i).equals("--host") && out.get(i + 1).equals(RENDERED_HOST)) {
                out.set(i + 1, podAddress);
            }
        }
        if (out.size() > 2 && out.get(2).equals(ConnectionRead.SCRIPT) && !out.contains("--local-address")) {
            out.addAll(List.of("--local-address", podAddress));
        }
        return out;
    }
}
