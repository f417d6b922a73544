package dev.ebb.operator.sim;

import dev.ebb.operator.drain.DrainHook;
import java.util.ArrayList;
import java.util.List;

/**
 * Every engine in the test world listens on its own loopback address, while what the operator renders always
 * reads 127.0.0.1. The only change the world makes to a rendered command is that one argv item.
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
        return out;
    }
}
