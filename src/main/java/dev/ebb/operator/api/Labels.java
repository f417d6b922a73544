package dev.ebb.operator.api;

import java.util.Optional;

/** Label keys the operator writes on everything it creates (the selectors of Services and routers use them), and how a number in one is read back. */
public final class Labels {
    private static final String PREFIX = "serving.ebb.dev/";

    public static final String DEPLOYMENT = PREFIX + "deployment";
    public static final String ROLE = PREFIX + "role";
    public static final String ROLE_KIND = PREFIX + "role-kind";
    public static final String REPLICA = PREFIX + "replica";
    public static final String MEMBER_INDEX = PREFIX + "member-index";
    public static final String CONFIG_HASH = PREFIX + "config-hash";
    /** On a drain hook's ConfigMap: the revision of the script it holds. */
    public static final String DRAIN_HOOK_REVISION = PREFIX + "drain-hook-revision";
    /** "true" while a Pod may receive new requests; withdrawal sets it to "false". */
    public static final String SERVING = PREFIX + "serving";

    public static final String SERVING_YES = "true";
    public static final String SERVING_NO = "false";
    public static final String LEADER_INDEX = "0";
    /** Set by Kubernetes on every EndpointSlice: the Service it belongs to. */
    public static final String SERVICE_NAME = "kubernetes.io/service-name";

    /** Enough digits for any count or index, few enough that the value fits an int. */
    private static final int MAX_DIGITS = 9;

    private Labels() {}

    /**
     * A number the operator wrote into a label or annotation (a replica ordinal, a member index, a replica's size),
     * read back as untrusted text: plain decimal digits only, no sign or spaces, few enough to fit an int.
     */
    public static Optional<Integer> number(String value) {
        if (value == null
                || value.isEmpty()
                || value.length() > MAX_DIGITS
                || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.empty();
        }
        return Optional.of(Integer.parseInt(value));
    }
}
