package dev.ebb.operator.api;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An engine release, as an image's tag names it ({@code vllm/vllm-openai:v0.33.0}, {@code lmsysorg/sglang:v0.5.23-cu130}).
 * Engines change their flags and metrics between releases; where that matters the operator asks the image's tag, and
 * an image whose tag names no release (a digest, "latest", a private build) is taken as a current one. Pure.
 */
public record EngineRelease(int major, int minor, int patch) implements Comparable<EngineRelease> {
    private static final Pattern RELEASE = Pattern.compile("v?(\\d{1,6})\\.(\\d{1,6})(?:\\.(\\d{1,6}))?(?:[^0-9].*)?");

    /** The release an image's tag names, if it names one. */
    public static Optional<EngineRelease> of(String image) {
        if (image == null) {
            return Optional.empty();
        }
        String name = image.contains("@") ? image.substring(0, image.indexOf('@')) : image;
        String last = name.substring(name.lastIndexOf('/') + 1);
        int colon = last.indexOf(':');
        if (colon < 0) {
            return Optional.empty();
        }
        Matcher m = RELEASE.matcher(last.substring(colon + 1));
        if (!m.matches()) {
            return Optional.empty();
        }
        return Optional.of(new EngineRelease(
                Integer.parseInt(m.group(1)),
                Integer.parseInt(m.group(2)),
                m.group(3) == null ? 0 : Integer.parseInt(m.group(3))));
    }

    /** Whether the image's tag names a release older than this one; false when it names none. */
    public static boolean olderThan(String image, EngineRelease release) {
        return of(image).filter(named -> named.compareTo(release) < 0).isPresent();
    }

    @Override
    public int compareTo(EngineRelease other) {
        int c = Integer.compare(major, other.major);
        if (c == 0) {
            c = Integer.compare(minor, other.minor);
        }
        return c != 0 ? c : Integer.compare(patch, other.patch);
    }

    @Override
    public String toString() {
        return "v" + major + "." + minor + "." + patch;
    }
}
