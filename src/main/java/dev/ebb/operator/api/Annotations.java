package dev.ebb.operator.api;

/** Annotation keys the operator writes on Pods, and the ones it reads back from them. */
public final class Annotations {
    /** The size a replica was created with, so that a later spec edit cannot change how it is classified. */
    public static final String REPLICA_SIZE = "serving.ebb.dev/replica-size";

    /**
     * The revision of the drain hook a Pod was created with. The hook's text is the operator's, not the spec's: it is
     * kept out of the config hash, so an operator upgrade that changes only the hook restarts no engine.
     */
    public static final String HOOK_REVISION = "serving.ebb.dev/hook-revision";

    /**
     * The engine image a Pod was created with when its role named none and took the operator's default. The default
     * is the operator's, not the spec's: it is kept out of the config hash, so an operator upgrade that changes it
     * restarts no engine by itself.
     */
    public static final String DEFAULT_IMAGE = "serving.ebb.dev/default-image";

    /**
     * The routing proxy's image a Pod was created with (a Decode role's Pod behind llm-d-router). It is always the
     * operator's default, and kept out of the config hash for the same reason as {@link #DEFAULT_IMAGE}.
     */
    public static final String ROUTING_PROXY_IMAGE = "serving.ebb.dev/routing-proxy-image";

    /**
     * The engine's own drain on SIGTERM the operator rendered into a Pod's command line (vLLM's --shutdown-timeout), in
     * seconds. It comes with the operator's choice of release and is kept out of the config hash for the same reason as
     * {@link #DEFAULT_IMAGE}.
     */
    public static final String ENGINE_SHUTDOWN = "serving.ebb.dev/engine-shutdown-seconds";

    /**
     * On a Pod whose /dev/shm the operator sized by default rather than the spec: the size. Such a volume stays out of
     * the configuration hash, so the release that brought the default turned over no replica.
     */
    public static final String DEFAULT_SHARED_MEMORY = "serving.ebb.dev/default-shared-memory";

    /** On a Pod whose startup probe the operator bounded by default: the bound in seconds, kept out of the hash alike. */
    public static final String DEFAULT_STARTUP_SECONDS = "serving.ebb.dev/default-startup-seconds";

    /**
     * Set on a ModelDeployment to a new value to replace, one replica at a time through the retirement protocol, every
     * replica that carries an older drain hook or default engine image than the operator renders.
     */
    public static final String REFRESH_HOOKS = "serving.ebb.dev/refresh-hooks";

    /** Set on a ModelDeployment to any new value to retry an aborted retirement at once, refusals included. */
    public static final String RETRY_RETIREMENT = "serving.ebb.dev/retry-retirement";

    public static final String SCRAPE = "prometheus.io/scrape";
    public static final String SCRAPE_PORT = "prometheus.io/port";
    public static final String SCRAPE_PATH = "prometheus.io/path";
    public static final String SCRAPE_SCHEME = "prometheus.io/scheme";

    private Annotations() {}
}
