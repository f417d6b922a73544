package dev.ebb.operator.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EngineReleaseTest {
    @ParameterizedTest
    @CsvSource({
        "vllm/vllm-openai:v0.11.0, 0, 11, 0",
        "vllm/vllm-openai:v0.18, 0, 18, 0",
        "lmsysorg/sglang:v0.5.4.post1-cu126, 0, 5, 4",
        "host:5000/team/vllm:1.2.3, 1, 2, 3",
    })
    void readsTheReleaseFromTheImageTag(String image, int major, int minor, int patch) {
        assertThat(EngineRelease.of(image)).contains(new EngineRelease(major, minor, patch));
    }

    @ParameterizedTest
    @CsvSource({
        "vllm/vllm-openai:latest",
        "vllm/vllm-openai",
        "host:5000/vllm",
        "vllm/vllm-openai@sha256:0123",
        "vllm:nightly-0.18.0",
        "vllm:v",
        "''"
    })
    void aTagThatNamesNoReleaseGivesNone(String image) {
        assertThat(EngineRelease.of(image)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({
        "vllm/vllm-openai:v0.11.0, true",
        "vllm/vllm-openai:v0.11.1, false",
        "vllm/vllm-openai:v0.33.0, false",
        "vllm/vllm-openai:latest, false",
        "vllm/vllm-openai@sha256:0123, false"
    })
    void onlyATagNamingAnOlderReleaseIsOlder(String image, boolean older) {
        assertThat(EngineRelease.olderThan(image, new EngineRelease(0, 11, 1))).isEqualTo(older);
    }
}
