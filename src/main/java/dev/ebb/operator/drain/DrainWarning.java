package dev.ebb.operator.drain;

/** Something about a role's drain window a user should know, named by a CamelCase reason. */
public record DrainWarning(String reason, String message) {
    public static final String NO_DRAIN_HOOK = "NoDrainHook";
    public static final String GRACE_TOO_SHORT = "GraceTooShortForSplitRole";
    public static final String PROXY_STOPS_AT_DELETE = "RoutingProxyStopsAtDelete";
}
