package dev.ebb.operator.api;

import java.util.List;

/** Reading an engine's command line as its argument parser does: {@code --flag value} or {@code --flag=value}. Pure. */
public final class Argv {
    private Argv() {}

    /** The flag an argument names, without any {@code =value}. */
    public static String flagOf(String arg) {
        int equals = arg.indexOf('=');
        return equals < 0 ? arg : arg.substring(0, equals);
    }

    /** The value of the flag at {@code i}: after its {@code =}, else the next argument; empty when there is none. */
    public static String valueAt(List<String> argv, int i) {
        String arg = argv.get(i);
        int equals = arg.indexOf('=');
        return equals >= 0 ? arg.substring(equals + 1) : i + 1 < argv.size() ? argv.get(i + 1) : "";
    }
}
