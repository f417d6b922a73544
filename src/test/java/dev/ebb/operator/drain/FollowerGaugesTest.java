package dev.ebb.operator.drain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class FollowerGaugesTest {
    record Row(String name, Engine engine, int size, List<String> args, Optional<String> onFollowers) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Row> roles() {
        return Stream.of(
                new Row(
                        "SGLang over two nodes with attention data parallelism",
                        Engine.SGLANG,
                        2,
                        List.of("--tp", "16", "--dp-size", "16", "--enable-dp-attention"),
                        Optional.of("--dp-size 16")),
                new Row(
                        "the flag alone",
                        Engine.SGLANG,
                        2,
                        List.of("--enable-dp-attention"),
                        Optional.of("--enable-dp-attention")),
                new Row(
                        "data parallelism by its long name, as name=value",
                        Engine.SGLANG,
                        4,
                        List.of("--data-parallel-size=2"),
                        Optional.of("--data-parallel-size 2")),
                new Row(
                        "v0.5.23's attention data-parallel size",
                        Engine.SGLANG,
                        2,
                        List.of("--attn-dp-size", "8"),
                        Optional.of("--attn-dp-size 8")),
                new Row(
                        "a size SGLang may not read as 1",
                        Engine.SGLANG,
                        2,
                        List.of("--dp", "auto"),
                        Optional.of("--dp auto")),
                new Row(
                        "a size flag with no value left",
                        Engine.SGLANG,
                        2,
                        List.of("--dp-size"),
                        Optional.of("--dp-size ")),
                new Row("one data-parallel group", Engine.SGLANG, 2, List.of("--dp-size", "1"), Optional.empty()),
                new Row("tensor parallelism across nodes", Engine.SGLANG, 2, List.of("--tp", "16"), Optional.empty()),
                new Row(
                        "pipeline parallelism across nodes",
                        Engine.SGLANG,
                        2,
                        List.of("--pp-size", "2"),
                        Optional.empty()),
                new Row(
                        "data parallelism on one Pod",
                        Engine.SGLANG,
                        1,
                        List.of("--dp-size", "8", "--enable-dp-attention"),
                        Optional.empty()),
                new Row(
                        "vLLM, whose data-parallel engines report to the leader's API server",
                        Engine.VLLM,
                        2,
                        List.of("--data-parallel-size", "4"),
                        Optional.empty()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("roles")
    void followersCountRequestsOfTheirOwnOnlyWithDataParallelGroupsAcrossSglangNodes(Row row) {
        assertThat(FollowerGauges.onFollowers(row.engine(), row.size(), row.args()))
                .isEqualTo(row.onFollowers());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("roles")
    void everySchedulerIsToldToRecordWhereFollowersCountTheirOwnUnlessTheRoleSaysSoItself(Row row) {
        List<String> alreadySet = new ArrayList<>(row.args());
        alreadySet.add(FollowerGauges.ALL_SCHEDULERS);

        assertThat(FollowerGauges.rendersAllSchedulers(row.engine(), row.size(), row.args()))
                .isEqualTo(row.onFollowers().isPresent());
        assertThat(FollowerGauges.rendersAllSchedulers(row.engine(), row.size(), alreadySet))
                .isFalse();
    }
}
