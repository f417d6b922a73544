package dev.ebb.operator.retire;

import static dev.ebb.operator.Specs.deployment;
import static dev.ebb.operator.Specs.role;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.DesiredDeployment;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.render.MemberSlot;
import dev.ebb.operator.render.PodRenderer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReplicaClassifierTest {
    private static final PodRenderer RENDERER = new PodRenderer();

    /** The Pods the operator rendered for replica 0 of the deployment's first role. */
    static List<Pod> replica(Specs.Deployment spec) {
        DesiredDeployment d = spec.desired();
        List<Pod> pods = new ArrayList<>();
        for (int m = 0; m < d.roles().get(0).size(); m++) {
            pods.add(RENDERER.render(new MemberSlot(d, d.roles().get(0), 0, m), "h1"));
        }
        return pods;
    }

    static Pod relabel(Pod pod, String key, String value) {
        return new PodBuilder(pod)
                .editMetadata()
                .addToLabels(key, value)
                .endMetadata()
                .build();
    }

    @Test
    void singlePodReplicaAnswersThroughItself() {
        assertThat(ReplicaClassifier.classify(replica(deployment("q", "vLLM").role(role("s")))))
                .isEqualTo(new Classification.Answerable(Engine.VLLM, List.of("q-s-r0-m0")));
    }

    /** Data-parallel groups that start on a follower count their requests on its own page: every member answers. */
    @Test
    void multiPodSglangReplicaWithDataParallelGroupsAnswersThroughEveryMemberInOrder() {
        List<Pod> members = new ArrayList<>(replica(deployment("q", "SGLang")
                .role(role("s").size(3).extraArgs("--dp-size", "3", "--enable-dp-attention"))));
        Collections.reverse(members);

        assertThat(ReplicaClassifier.classify(members))
                .isEqualTo(
                        new Classification.Answerable(Engine.SGLANG, List.of("q-s-r0-m0", "q-s-r0-m1", "q-s-r0-m2")));
        assertThat(ReplicaClassifier.classify(replica(
                        deployment("q", "vLLM").role(role("s").size(2).extraArgs("--data-parallel-size", "2")))))
                .as("vLLM's data-parallel engines report to the leader's API server")
                .isEqualTo(new Classification.Answerable(Engine.VLLM, List.of("q-s-r0-m0")));
    }

    @Test
    void multiPodReplicaAnswersThroughItsLeaderAlone() {
        assertThat(ReplicaClassifier.classify(
                        replica(deployment("q", "SGLang").role(role("s").size(3)))))
                .isEqualTo(new Classification.Answerable(Engine.SGLANG, List.of("q-s-r0-m0")));
    }

    static Stream<Arguments> splitReplicas() {
        return Stream.of(
                Arguments.of(
                        "vLLM prefill",
                        deployment("q", "vLLM").scaling("p").role(role("p").kind("Prefill"))),
                Arguments.of(
                        "vLLM decode",
                        deployment("q", "vLLM").scaling("d").role(role("d").kind("Decode"))),
                Arguments.of(
                        "SGLang prefill",
                        deployment("q", "SGLang").scaling("p").role(role("p").kind("Prefill"))),
                Arguments.of(
                        "SGLang decode, multi-Pod",
                        deployment("q", "SGLang")
                                .scaling("d")
                                .role(role("d").kind("Decode").size(2))),
                Arguments.of(
                        "SGLang server made a decoder by extraArgs",
                        deployment("q", "SGLang").role(role("s").extraArgs("--disaggregation-mode=decode"))),
                Arguments.of(
                        "vLLM data-parallel balancing",
                        deployment("q", "vLLM").role(role("s").extraArgs("--data-parallel-hybrid-lb"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("splitReplicas")
    void prefillOrDecodeReplicaIsRefusedFromItsOwnCommand(String title, Specs.Deployment spec) {
        assertThat(ReplicaClassifier.classify(replica(spec)))
                .isInstanceOfSatisfying(
                        Classification.Refused.class,
                        refused -> assertThat(refused.reason()).isEqualTo(Reason.DISAGGREGATED));
    }

    @Test
    void sglangWithANonSplitModeIsNotRefused() {
        assertThat(ReplicaClassifier.classify(
                        replica(deployment("q", "SGLang").role(role("s").extraArgs("--disaggregation-mode", "null")))))
                .isInstanceOf(Classification.Answerable.class);
    }

    @Test
    void takeOverReplicaIsHeld() {
        assertThat(ReplicaClassifier.classify(
                        replica(deployment("q", "vLLM").role(role("s").command("vllm", "serve", "m")))))
                .isInstanceOfSatisfying(
                        Classification.Held.class,
                        held -> assertThat(held.reason()).isEqualTo(Reason.TAKE_OVER));
    }

    @Test
    void operatorBuiltLookingPodWithAnUnknownEngineIsRefused() {
        Pod pod = replica(deployment("q", "vLLM").role(role("s"))).get(0);
        pod.getSpec().getContainers().get(0).setCommand(List.of("/opt/tgi/launcher", "--port", "8000"));

        assertThat(ReplicaClassifier.classify(List.of(pod)))
                .isInstanceOfSatisfying(
                        Classification.Refused.class,
                        refused -> assertThat(refused.reason()).isEqualTo(Reason.NO_GAUGE_LIST));
    }

    static Stream<Arguments> unanswerableReplicas() {
        List<Pod> pair = replica(deployment("q", "vLLM").role(role("s").size(2)));
        return Stream.of(
                Arguments.of(Reason.NO_LEADER, List.of(relabel(pair.get(0), Labels.MEMBER_INDEX, "7"), pair.get(1))),
                Arguments.of(
                        Reason.MULTIPLE_LEADERS, List.of(pair.get(0), relabel(pair.get(1), Labels.MEMBER_INDEX, "0"))),
                Arguments.of(
                        Reason.CONFIGURATION_DISAGREEMENT,
                        List.of(pair.get(0), relabel(pair.get(1), Labels.CONFIG_HASH, "h2"))),
                Arguments.of(
                        Reason.SIZE_MISMATCH,
                        List.of(
                                pair.get(0),
                                relabel(pair.get(1), Labels.MEMBER_INDEX, "2"),
                                new PodBuilder(pair.get(1))
                                        .editMetadata()
                                        .withName("q-s-r0-m1b")
                                        .endMetadata()
                                        .build())),
                Arguments.of(Reason.NO_LEADER, List.of(relabel(pair.get(1), Labels.MEMBER_INDEX, "2"))),
                Arguments.of(Reason.NO_LEADER, List.of(relabel(pair.get(1), Labels.MEMBER_INDEX, "01"))),
                Arguments.of(
                        Reason.SIZE_MISMATCH,
                        List.of(
                                pair.get(0),
                                new PodBuilder(pair.get(1))
                                        .editMetadata()
                                        .addToAnnotations(Annotations.REPLICA_SIZE, "3")
                                        .endMetadata()
                                        .build())));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unanswerableReplicas")
    void replicaWhoseAnsweringMemberCannotBeNamedIsHeldWithTheReason(Reason reason, List<Pod> members) {
        assertThat(ReplicaClassifier.classify(members))
                .isInstanceOfSatisfying(
                        Classification.Held.class,
                        held -> assertThat(held.reason()).isEqualTo(reason));
    }

    @Test
    void aReplicaShortOfFollowersStillAnswersThroughItsLeader() {
        List<Pod> three = replica(deployment("q", "SGLang").role(role("s").size(3)));

        assertThat(ReplicaClassifier.classify(List.of(three.get(0), three.get(2))))
                .isEqualTo(new Classification.Answerable(Engine.SGLANG, List.of("q-s-r0-m0")));
    }

    @Test
    void followersLeftWithoutTheirLeaderAreUnreachable() {
        List<Pod> three = replica(deployment("q", "SGLang").role(role("s").size(3)));

        assertThat(ReplicaClassifier.classify(List.of(three.get(2), three.get(1))))
                .isInstanceOfSatisfying(
                        Classification.Unreachable.class,
                        unreachable -> assertThat(unreachable.message()).contains("q-s-r0-m1, q-s-r0-m2"));
    }

    static Stream<Arguments> notPlainlyShort() {
        List<Pod> three = replica(deployment("q", "SGLang").role(role("s").size(3)));
        Pod unsized = new PodBuilder(three.get(1))
                .editMetadata()
                .removeFromAnnotations(Annotations.REPLICA_SIZE)
                .endMetadata()
                .build();
        return Stream.of(
                Arguments.of(
                        "two members at one index",
                        List.of(three.get(1), relabel(three.get(2), Labels.MEMBER_INDEX, "1"))),
                Arguments.of("an index beyond the size", List.of(relabel(three.get(1), Labels.MEMBER_INDEX, "3"))),
                Arguments.of(
                        "no index",
                        List.of(new PodBuilder(three.get(1))
                                .editMetadata()
                                .removeFromLabels(Labels.MEMBER_INDEX)
                                .endMetadata()
                                .build())),
                Arguments.of("no size", List.of(unsized)),
                Arguments.of(
                        "sizes that disagree",
                        List.of(
                                three.get(1),
                                new PodBuilder(three.get(2))
                                        .editMetadata()
                                        .addToAnnotations(Annotations.REPLICA_SIZE, "4")
                                        .endMetadata()
                                        .build())),
                Arguments.of(
                        "a size that is not a number",
                        List.of(new PodBuilder(three.get(1))
                                .editMetadata()
                                .addToAnnotations(Annotations.REPLICA_SIZE, "3; rm -rf /")
                                .endMetadata()
                                .build())),
                Arguments.of(
                        "as many followers as the size",
                        List.of(relabel(three.get(0), Labels.MEMBER_INDEX, "3"), three.get(1), three.get(2))));
    }

    /** Only a replica that plainly lost members is taken for one: anything else someone changed is held, failing closed. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("notPlainlyShort")
    void leaderlessMembersThatDoNotPlainlyShowALostLeaderAreHeld(String title, List<Pod> members) {
        assertThat(ReplicaClassifier.classify(members)).isInstanceOf(Classification.Held.class);
    }
}
