package dev.ebb.operator.api;

/**
 * What the cluster supports that changes how Pods are rendered.
 *
 * @param nativeSidecars init containers with restartPolicy Always start before and stop after the main containers;
 *     on by default since Kubernetes 1.29
 */
public record Platform(boolean nativeSidecars) {
    public static final Platform CURRENT = new Platform(true);
    public static final Platform BEFORE_NATIVE_SIDECARS = new Platform(false);

    /** From the API server's version; a version that cannot be read gets the form every version runs. */
    public static Platform of(String major, String minor) {
        try {
            int ma = Integer.parseInt(major.replaceAll("[^0-9]", ""));
            int mi = Integer.parseInt(minor.replaceAll("[^0-9]", ""));
            return ma > 1 || ma == 1 && mi >= 29 ? CURRENT : BEFORE_NATIVE_SIDECARS;
        } catch (RuntimeException e) {
            return BEFORE_NATIVE_SIDECARS;
        }
    }
}
