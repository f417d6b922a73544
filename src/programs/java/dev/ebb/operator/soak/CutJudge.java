package dev.ebb.operator.soak;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Whether a cut generation is explained by something done from outside the operator. A deletion explains it only
 * when the numbers show the generation needed more than the deletion's drain window: started at s, length L, the Pod
 * deleted at d with grace g, the window ends at d + g, so only s + L > d + g could not finish. A container or router
 * restart ends every stream it carries at once, so it explains only a cut that came with it. What happens to any
 * member of a multi-Pod replica happens to its leader's streams too: the engine's collective spans every member.
 * Anything else cut a generation the operator was meant to protect.
 */
public final class CutJudge {
    /** How far the clocks of the client, the kubelet and the soak may disagree about one moment. */
    static final Duration SLACK = Duration.ofSeconds(2);

    private static final Pattern MEMBER_SUFFIX = Pattern.compile("-m\\d+$");

    private CutJudge() {}

    public record Verdict(boolean explained, String why) {}

    public static Verdict judge(Sent cut, List<Disruption> disruptions, Instant origin) {
        Instant start = cut.request().start();
        Instant end = cut.request().end();
        String pod = cut.request().pod();
        String request = String.format(
                Locale.ROOT,
                "%s on %s: started %s, length %s, cut %s (%s)",
                cut.deployment(),
                pod,
                at(start, origin),
                seconds(cut.length()),
                at(end, origin),
                cut.request().why());
        if (pod == null) {
            return new Verdict(false, request + "; no Pod named, so nothing can explain it");
        }
        Optional<Disruption> restart = disruptions.stream()
                .filter(d -> (d.kind() == Disruption.Kind.CONTAINER_RESTART && sameReplica(d.target(), pod))
                        || (cut.routed()
                                && d.kind() == Disruption.Kind.ROUTER_RESTART
                                && d.target().equals(cut.deployment())))
                // a restart ends what it carries at once: it explains a cut that came with it, not one long after
                .filter(d -> !d.at().isBefore(start.minus(SLACK))
                        && !d.at().isBefore(end.minus(SLACK))
                        && !d.at().isAfter(end.plus(SLACK)))
                .findFirst();
        if (restart.isPresent()) {
            return new Verdict(
                    true,
                    request + "; " + restart.get().kind() + " of "
                            + restart.get().target() + " at " + at(restart.get().at(), origin));
        }
        // the deletion of this Pod nearest before the cut, which the request either ran into or started during
        Optional<Disruption> deletion = disruptions.stream()
                .filter(d -> d.kind() == Disruption.Kind.DELETE_POD || d.kind() == Disruption.Kind.DRAIN)
                .filter(d -> sameReplica(d.target(), pod))
                .filter(d -> !d.at().isAfter(end.plus(SLACK))
                        && !d.at().plus(d.grace()).plus(SLACK).isBefore(start))
                .max(Comparator.comparing(Disruption::at));
        if (deletion.isEmpty()) {
            return new Verdict(
                    false,
                    request
                            + "; no outside deletion or restart of that Pod or its replica's other members while it ran");
        }
        Disruption d = deletion.get();
        Instant windowEnds = d.at().plus(d.grace());
        String numbers = String.format(
                Locale.ROOT,
                "%s at %s with grace %s: the window ended %s, the generation would have ended %s",
                d.kind(),
                at(d.at(), origin),
                seconds(d.grace()),
                at(windowEnds, origin),
                at(cut.wouldEnd(), origin));
        boolean neededMore = cut.wouldEnd().isAfter(windowEnds.minus(SLACK));
        return new Verdict(neededMore, request + "; " + numbers + (neededMore ? "" : ", inside the window"));
    }

    /** Whether two Pods are members of one replica (named {@code <replica>-m<member>}), or the same Pod. */
    static boolean sameReplica(String pod, String other) {
        return replicaOf(pod).equals(replicaOf(other));
    }

    private static String replicaOf(String pod) {
        return MEMBER_SUFFIX.matcher(pod).replaceFirst("");
    }

    static String at(Instant t, Instant origin) {
        return seconds(Duration.between(origin, t));
    }

    static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }
}
