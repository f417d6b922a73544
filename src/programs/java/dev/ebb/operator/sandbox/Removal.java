package dev.ebb.operator.sandbox;

import java.util.Map;

/** How a replica is taken away in a run: Ebb's way, and the ways it is compared with. */
public enum Removal {
    EBB(
            "Ebb",
            "the operator: takes a replica out of the router, reads its engine until it holds no request, then deletes it",
            Map.of()),
    /**
     * The operator's settings for retiring one replica at a time, always the highest ordinal. An operator that does
     * not know them yet reads them as unknown settings and behaves as {@link #EBB}.
     */
    EBB_ONE_AT_A_TIME(
            "Ebb 1-by-1",
            "the operator retiring one replica at a time, highest ordinal first "
                    + "(ebb.retirement.max-concurrent=1, ebb.retirement.choose-by-load=false)",
            Map.of("ebb.retirement.max-concurrent", "1", "ebb.retirement.choose-by-load", "false")),
    EBB_HOOK_ONLY(
            "Ebb's hook only",
            "delete the Pods at once, highest ordinals; Ebb's drain hook and grace, no retirement protocol",
            Map.of()),
    NAIVE(
            "naive",
            "delete the Pods at once, no hook: the engine gets SIGTERM straight away and drops what it holds",
            Map.of()),
    /** The way peers' guides set up a graceful scale-down: a fixed sleep before SIGTERM, within the grace. */
    HOOK_ONLY(
            "hook only",
            "delete the Pods at once with a preStop hook of sleep " + PlainFleet.FIXED_SLEEP_SECONDS
                    + " s within the grace, then the engine's own SIGTERM, which drops what it still holds",
            Map.of());

    private final String label;
    private final String description;
    private final Map<String, String> operatorSettings;

    Removal(String label, String description, Map<String, String> operatorSettings) {
        this.label = label;
        this.description = description;
        this.operatorSettings = operatorSettings;
    }

    public String label() {
        return label;
    }

    public String description() {
        return description;
    }

    /** True when the operator owns the replicas; otherwise a plain controller deletes Pods as a StatefulSet would. */
    public boolean operated() {
        return this == EBB || this == EBB_ONE_AT_A_TIME;
    }

    /** {@code ebb.*} settings the operator runs with, beside the defaults. */
    public Map<String, String> operatorSettings() {
        return operatorSettings;
    }
}
