package dev.ebb.operator.render;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.Labels;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A follower's leader as its Pod's labels name it: labels come from the cluster, where anyone may have edited them. */
class MemberSlotTest {
    private static Map<String, String> follower() {
        Map<String, String> labels = new HashMap<>();
        labels.put(Labels.DEPLOYMENT, "qwen");
        labels.put(Labels.ROLE, "big");
        labels.put(Labels.REPLICA, "3");
        labels.put(Labels.MEMBER_INDEX, "1");
        return labels;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            nullValues = "ABSENT",
            value = {
                "a follower,               ,                         , qwen-big-r3-m0",
                "the leader,               serving.ebb.dev/member-index, 0, ",
                "no member index (a leader), serving.ebb.dev/member-index, ABSENT, ",
                "no replica,               serving.ebb.dev/replica,  ABSENT, ",
                "a replica not a number,   serving.ebb.dev/replica,  3; rm -rf /, ",
                "a replica past an int,    serving.ebb.dev/replica,  99999999999, ",
                "a negative replica,       serving.ebb.dev/replica,  -1, ",
                "a signed replica,         serving.ebb.dev/replica,  +3, ",
                "no role,                  serving.ebb.dev/role,     ABSENT, ",
                "no deployment,            serving.ebb.dev/deployment, ABSENT, "
            })
    void aFollowersLeaderIsNamedOnlyByLabelsThatPlaceItInAReplica(
            String what, String label, String value, String leaderPod) {
        Map<String, String> labels = follower();
        if (label != null) {
            if (value == null) {
                labels.remove(label);
            } else {
                labels.put(label, value);
            }
        }
        Optional<MemberSlot.Leader> leader = MemberSlot.leaderOf(labels);
        assertThat(leader.map(MemberSlot.Leader::pod)).isEqualTo(Optional.ofNullable(leaderPod));
        leader.ifPresent(l -> assertThat(l.host()).isEqualTo("qwen-big-r3-m0.qwen-big-r3"));
    }
}
