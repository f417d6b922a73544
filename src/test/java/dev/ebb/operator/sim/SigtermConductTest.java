package dev.ebb.operator.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SigtermConductTest {
    private static List<String> command(String flags) {
        List<String> base = List.of("vllm", "serve", "m", "--port", "8000");
        return flags.isEmpty()
                ? base
                : Stream.concat(base.stream(), Arrays.stream(flags.split(" "))).toList();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource(
            delimiter = '|',
            value = {
                // engine | image                            | flags                        | drains | limit (s, -1
                // none)
                "VLLM     | vllm/vllm-openai:v0.11.0         | ''                           | false  | -1",
                "VLLM     | vllm/vllm-openai:v0.17.1         | --shutdown-timeout 60        | false  | -1",
                "VLLM     | vllm/vllm-openai:v0.18.0         | ''                           | false  | -1",
                "VLLM     | vllm/vllm-openai:v0.18.0         | --shutdown-timeout 0         | false  | -1",
                "VLLM     | vllm/vllm-openai:v0.18.0         | --shutdown-timeout 60        | true   | 60",
                "VLLM     | vllm/vllm-openai:v0.18.0         | --shutdown-timeout=45        | true   | 45",
                "VLLM     | vllm/vllm-openai:v0.19.1-cu130   | --shutdown-timeout 30        | true   | 30",
                "VLLM     | vllm/vllm-openai:0.18.0          | --shutdown-timeout 5 --shutdown-timeout 7 | true | 7",
                "VLLM     | registry.local:5000/vllm:v0.20.0 | --shutdown-timeout 10        | true   | 10",
                "VLLM     | vllm/vllm-openai:v0.18.0         | --shutdown-timeout soon      | false  | -1",
                "VLLM     | vllm/vllm-openai:v0.18.0         | --shutdown-timeout           | false  | -1",
                // a tag that names no release: the flag was accepted, so the release has it
                "VLLM     | vllm/vllm-openai:latest          | --shutdown-timeout 20        | true   | 20",
                "VLLM     | vllm/vllm-openai@sha256:abcd     | ''                           | false  | -1",
                "VLLM     | vllm                             | ''                           | false  | -1",
                "SGLANG   | lmsysorg/sglang:v0.5.4           | ''                           | true   | -1",
                "SGLANG   | lmsysorg/sglang:v0.5.4           | --shutdown-timeout 5         | true   | -1",
            })
    void eachReleaseAndFlagGetsTheConductItsSourceShows(
            Engine engine, String image, String flags, boolean drains, long limit) {
        SigtermConduct conduct = SigtermConduct.of(engine, image, command(flags));

        assertThat(conduct.drains()).isEqualTo(drains);
        assertThat(conduct.limit()).isEqualTo(limit < 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(limit)));
    }
}
