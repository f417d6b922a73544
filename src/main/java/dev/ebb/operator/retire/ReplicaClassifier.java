package dev.ebb.operator.retire;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.Argv;
import dev.ebb.operator.api.EnginePod;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.drain.FollowerGauges;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Classifies a replica as it was deployed, from its own Pods: their commands, labels and the size they were
 * created with, never from today's spec. Pure.
 */
public final class ReplicaClassifier {
    /** vLLM flags that make a replica one half of a prefill/decode pair, or balance data-parallel ranks across Pods. */
    private static final Set<String> VLLM_SPLIT_FLAGS =
            Set.of("--kv-transfer-config", "--data-parallel-hybrid-lb", "--data-parallel-external-lb");

    private static final Set<String> SGLANG_SPLIT_MODES = Set.of("prefill", "decode");

    private ReplicaClassifier() {}

    public static Classification classify(List<Pod> members) {
        for (Pod member : members) {
            Optional<String> split = splitRole(engineCommand(member));
            if (split.isPresent()) {
                return new Classification.Refused(
                        Reason.DISAGGREGATED,
                        member.getMetadata().getName() + " runs " + split.get()
                                + ": a prefill or decode replica reading zero may be handed work at any moment, so it is never retired this way");
            }
        }
        List<Pod> leaders = members.stream()
                .filter(p -> Labels.LEADER_INDEX.equals(label(p, Labels.MEMBER_INDEX)))
                .toList();
        if (leaders.isEmpty() && shortOfMembersAsCreated(members)) {
            return new Classification.Unreachable(
                    "only followers of the replica are left (" + String.join(", ", names(members))
                            + "): its leader is gone, and no client or router reaches a follower, so nothing of it can be in flight");
        }
        if (leaders.isEmpty()) {
            return new Classification.Held(
                    Reason.NO_LEADER, "no member carries leader index 0, so no member can answer for the replica");
        }
        if (leaders.size() > 1) {
            return new Classification.Held(Reason.MULTIPLE_LEADERS, leaders.size() + " members carry leader index 0");
        }
        if (members.stream().map(p -> label(p, Labels.CONFIG_HASH)).distinct().count() > 1) {
            return new Classification.Held(
                    Reason.CONFIGURATION_DISAGREEMENT, "the members were created at different configurations");
        }
        List<String> sizes = members.stream()
                .map(p -> annotation(p, Annotations.REPLICA_SIZE))
                .distinct()
                .toList();
        // a replica short of followers still answers through its leader: whatever it holds is in the leader's gauges
        boolean whole = sizes.size() == 1 && Objects.equals(sizes.get(0), Integer.toString(members.size()));
        if (!whole && !shortOfMembersAsCreated(members)) {
            return new Classification.Held(
                    Reason.SIZE_MISMATCH,
                    "the replica has " + members.size() + " members but was created with size "
                            + String.join(
                                    " / ", sizes.stream().map(String::valueOf).toList()));
        }
        Pod leader = leaders.get(0);
        if (annotation(leader, Annotations.SCRAPE) == null) {
            return new Classification.Held(
                    Reason.TAKE_OVER,
                    "the role sets its own command, so the operator cannot tell what serves the gauges");
        }
        Optional<Engine> engine = engineOf(engineCommand(leader));
        if (engine.isEmpty()) {
            return new Classification.Refused(
                    Reason.NO_GAUGE_LIST, "the leader's command runs no engine the operator has a gauge list for");
        }
        List<String> leaderCommand = engineCommand(leader);
        if (FollowerGauges.onFollowers(engine.get(), members.size(), leaderCommand)
                .isPresent()) {
            // data-parallel groups that start on a follower show their requests on that follower's page alone
            return new Classification.Answerable(
                    engine.get(),
                    members.stream()
                            .sorted(Comparator.comparing(p ->
                                    plainDecimal(label(p, Labels.MEMBER_INDEX)).orElse(Integer.MAX_VALUE)))
                            .map(p -> p.getMetadata().getName())
                            .toList());
        }
        return new Classification.Answerable(
                engine.get(), List.of(leader.getMetadata().getName()));
    }

    /**
     * Whether the members are fewer than the one size they all record, each at its own index below that size: a
     * replica that lost members (deleted, evicted), not one whose labels or annotations someone changed.
     */
    private static boolean shortOfMembersAsCreated(List<Pod> members) {
        List<String> sizes = members.stream()
                .map(p -> annotation(p, Annotations.REPLICA_SIZE))
                .distinct()
                .toList();
        Optional<Integer> size = sizes.size() == 1 ? plainDecimal(sizes.get(0)) : Optional.empty();
        if (members.isEmpty() || size.isEmpty() || members.size() >= size.get()) {
            return false;
        }
        List<Optional<Integer>> indexes = members.stream()
                .map(p -> plainDecimal(label(p, Labels.MEMBER_INDEX)))
                .toList();
        return indexes.stream()
                        .allMatch(i -> i.filter(index -> index < size.get()).isPresent())
                && indexes.stream().distinct().count() == members.size();
    }

    /** A member index or replica size as the renderer writes it: a decimal without sign or leading zero, of at most six digits. */
    private static Optional<Integer> plainDecimal(String value) {
        if (value == null || !value.matches("0|[1-9][0-9]{0,5}")) {
            return Optional.empty();
        }
        return Optional.of(Integer.parseInt(value));
    }

    private static List<String> names(List<Pod> members) {
        return members.stream().map(p -> p.getMetadata().getName()).sorted().toList();
    }

    /** The flag that makes the command one half of a split, read from the command itself. */
    static Optional<String> splitRole(List<String> command) {
        for (int i = 0; i < command.size(); i++) {
            String arg = command.get(i);
            String flag = Argv.flagOf(arg);
            if (VLLM_SPLIT_FLAGS.contains(flag) && isVllm(command)) {
                return Optional.of(flag);
            }
            if (flag.equals("--disaggregation-mode")) {
                String mode = Argv.valueAt(command, i);
                if (SGLANG_SPLIT_MODES.contains(mode)) {
                    return Optional.of("--disaggregation-mode " + mode);
                }
            }
        }
        return Optional.empty();
    }

    /** The engine an operator-built command runs, recognised from the command itself. */
    public static Optional<Engine> engineOf(List<String> command) {
        if (isVllm(command)) {
            return Optional.of(Engine.VLLM);
        }
        return command.contains("sglang.launch_server") ? Optional.of(Engine.SGLANG) : Optional.empty();
    }

    /** The engine a member Pod runs, from its own engine container's command. */
    public static Optional<Engine> engineOf(Pod member) {
        return engineOf(engineCommand(member));
    }

    private static boolean isVllm(List<String> command) {
        return command.size() >= 2
                && command.get(0).equals("vllm")
                && command.get(1).equals("serve");
    }

    /** A member Pod's engine container's command, empty when it has none. */
    public static List<String> engineCommand(Pod pod) {
        if (pod.getSpec() == null || pod.getSpec().getContainers() == null) {
            return List.of();
        }
        return pod.getSpec().getContainers().stream()
                .filter(c -> EnginePod.CONTAINER.equals(c.getName()) && c.getCommand() != null)
                .map(c -> c.getCommand())
                .findFirst()
                .orElse(List.of());
    }

    private static String label(Pod pod, String key) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        return labels == null ? null : labels.get(key);
    }

    private static String annotation(Pod pod, String key) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(key);
    }
}
