package dev.ebb.operator.sandbox;

/** How a replica is taken away in a run: Ebb's way, and the ways it is compared with. */
public enum Removal {
    EBB("Ebb", "withdraw, read idle twice, delete; drain hook on every Pod"),
    NAIVE("naive", "delete at once, no hook: the engine gets SIGTERM straight away"),
    FIXED_SLEEP("sleep " + PlainFleet.FIXED_SLEEP_SECONDS + " s",
            "delete at once with a fixed preStop sleep of " + PlainFleet.FIXED_SLEEP_SECONDS + " s, as some charts ship");

    private final String label;
    private final String description;

    Removal(String label, String description) {
        this.label = label;
        this.description = description;
    }

    public String label() {
        return label;
    }

    public String description() {
        return description;
    }
}
