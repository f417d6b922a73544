package dev.ebb.operator.drain;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a drain hook ended, as it wrote it into its container's termination message: {@code ebb drain hook [KIND]: LINE}.
 * The message comes from inside the container, which anything running there may write, so it is read strictly: only
 * the last line of that form counts, its kind from a fixed set (any other is {@link Kind#UNKNOWN}, never idle), its
 * text bounded and stripped of control characters. Pure.
 */
public record HookEnding(Kind kind, String line) {
    /** The kinds the hook writes; every one but {@link #IDLE} means SIGTERM came without the engine proven idle. */
    public enum Kind {
        IDLE,
        NOTHING_TO_MEASURE,
        DEADLINE,
        BAD_ARGUMENTS,
        STOPPED,
        NO_SCRIPT,
        UNKNOWN;

        static Kind of(String written) {
            for (Kind kind : values()) {
                if (kind != UNKNOWN
                        && kind.name()
                                .toLowerCase(Locale.ROOT)
                                .replace('_', '-')
                                .equals(written)) {
                    return kind;
                }
            }
            return UNKNOWN;
        }
    }

    /** The kubelet keeps at most 4096 bytes of a container's termination message; anything longer is not the hook's. */
    static final int MAX_MESSAGE = 4096;

    static final int MAX_LINE = 400;
    private static final Pattern ENDING =
            Pattern.compile("^ebb drain hook \\[([a-z-]{1,32})\\]: (.*)$", Pattern.MULTILINE);

    /** The hook's ending in a container's termination message; empty when the message carries none. */
    public static Optional<HookEnding> in(String terminationMessage) {
        if (terminationMessage == null || terminationMessage.length() > MAX_MESSAGE) {
            return Optional.empty();
        }
        Matcher matcher = ENDING.matcher(terminationMessage);
        HookEnding last = null;
        while (matcher.find()) {
            String text = matcher.group(2).replaceAll("\\p{Cntrl}+", " ").strip();
            last = new HookEnding(
                    Kind.of(matcher.group(1)),
                    text.length() <= MAX_LINE ? text : text.substring(0, MAX_LINE - 1) + "…");
        }
        return Optional.ofNullable(last);
    }

    /** Whether the hook let SIGTERM through only once the engine was read idle. */
    public boolean provenIdle() {
        return kind == Kind.IDLE;
    }
}
