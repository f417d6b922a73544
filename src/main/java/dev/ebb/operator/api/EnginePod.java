package dev.ebb.operator.api;

/**
 * What every engine Pod the operator renders has, which the renderer writes and the member reads, the drain hook, the
 * status and the checks look for.
 */
public final class EnginePod {
    /** The engine container's name. */
    public static final String CONTAINER = "main";
    /** Where another process in the Pod reaches the engine: the loopback address every container of a Pod shares. */
    public static final String LOOPBACK = "127.0.0.1";

    private EnginePod() {}
}
