package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Each router's answer turned into "still selects" and the dispatches it counted, for the target only. */
class RouterDialectsTest {
    private static final Pod TARGET = new PodBuilder()
            .withNewMetadata()
            .withName("qwen-server-r1-m0")
            .endMetadata()
            .withNewStatus()
            .withPodIP("10.0.0.8")
            .endStatus()
            .build();

    /** The picker's page as released, with the target's series left out when it no longer holds the target. */
    private static String picker(boolean holdsTarget) {
        return RouterAnswersTest.releasedPickerPage()
                .lines()
                .filter(line -> holdsTarget || !line.contains("_queue_size{") || !line.contains("qwen-server-r1-m0"))
                .collect(Collectors.joining("\n", "", "\n"));
    }

    @Test
    void thePickerCountsDispatchesToTheTargetAndNeverThoseToAnotherMember() {
        LlmDRouterDialect dialect = new LlmDRouterDialect();

        assertThat(dialect.read(picker(true), List.of(TARGET)))
                .isEqualTo(new RouterView(Optional.of(true), Map.of("qwen-server-r1-m0", 9.0)));
        assertThat(dialect.read(picker(false), List.of(TARGET)))
                .isEqualTo(new RouterView(Optional.of(false), Map.of("qwen-server-r1-m0", 9.0)));
    }

    @Test
    void aPickerWritingOnlyItsReleasedNamesIsReadAsFully() {
        String released = picker(true)
                .lines()
                .filter(line -> !line.startsWith("inference_"))
                .collect(Collectors.joining("\n", "", "\n"));

        assertThat(new LlmDRouterDialect().read(released, List.of(TARGET)))
                .isEqualTo(new RouterView(Optional.of(true), Map.of("qwen-server-r1-m0", 9.0)));
    }

    @Test
    void aTargetThePickerNeverScheduledCountsNoDispatch() {
        Pod fresh = new PodBuilder()
                .withNewMetadata()
                .withName("qwen-server-r2-m0")
                .endMetadata()
                .build();

        assertThat(new LlmDRouterDialect().read(picker(true), List.of(fresh)))
                .isEqualTo(new RouterView(Optional.of(false), Map.of("qwen-server-r2-m0", 0.0)));
    }

    @Test
    void aPickerPageWithoutItsCountsCannotTell() {
        RouterView unreadable =
                RouterView.unavailable("served a metrics page without the endpoints or attempts it must show");
        assertThat(new LlmDRouterDialect().read("up 1\n", List.of(TARGET))).isEqualTo(unreadable);
        assertThat(new LlmDRouterDialect().read(picker(true) + "llm_d_epp_per_endpoint_queue_size{\n", List.of(TARGET)))
                .isEqualTo(unreadable);
    }

    @Test
    void theGatewaySelectsByPodAddressAndTheRouterByEngineId() {
        String workers = "{\"workers\":[{\"url\":\"http://10.0.0.8:8000\"}]}";
        String engines = "[{\"engine_id\":\"" + RouterAnswers.vllmEngineId("qwen-server-r1-m0") + "\"}]";

        assertThat(new SglangGatewayDialect().read(workers, List.of(TARGET)).selects())
                .contains(true);
        assertThat(new SglangGatewayDialect()
                        .read("{\"workers\":[]}", List.of(TARGET))
                        .selects())
                .contains(false);
        assertThat(new VllmRouterDialect().read(engines, List.of(TARGET)).selects())
                .contains(true);
        assertThat(new VllmRouterDialect().read("[]", List.of(TARGET)).selects())
                .contains(false);
        assertThat(new VllmRouterDialect().read("<html>", List.of(TARGET)).selects())
                .isEmpty();
    }

    private static Pod member(String name, String ip) {
        return new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewStatus()
                .withPodIP(ip)
                .endStatus()
                .build();
    }

    @Test
    void vllmsRouterSelectsTheEnginesItsReleasedAnswerLists() {
        String engines = RouterFixtures.read("vllm-router/engines.json");
        VllmRouterDialect dialect = new VllmRouterDialect();

        assertThat(dialect.read(engines, List.of(member("qwen-server-r1-m0", "10.0.0.2")))
                        .selects())
                .contains(true);
        assertThat(dialect.read(engines, List.of(member("qwen-server-r2-m0", "10.0.0.3")))
                        .selects())
                .contains(false);
    }

    @Test
    void sglangsGatewaySelectsTheWorkersItsReleasedAnswerListsWhateverTheirConnection() {
        SglangGatewayDialect dialect = new SglangGatewayDialect();
        String regular = RouterFixtures.read("sglang-gateway/workers.json");
        String split = RouterFixtures.read("sglang-gateway/workers-pd.json");

        assertThat(dialect.read(regular, List.of(member("qwen-server-r1-m0", "10.0.0.2")))
                        .selects())
                .contains(true);
        assertThat(dialect.read(regular, List.of(member("qwen-server-r2-m0", "10.0.0.3")))
                        .selects())
                .contains(false);
        assertThat(dialect.read(split, List.of(member("qwen-decode-r0-m0", "10.0.0.5")))
                        .selects())
                .contains(true);
        assertThat(dialect.read(
                                regular,
                                List.of(new PodBuilder()
                                        .withNewMetadata()
                                        .withName("unscheduled")
                                        .endMetadata()
                                        .build()))
                        .selects())
                .contains(false);
    }
}
