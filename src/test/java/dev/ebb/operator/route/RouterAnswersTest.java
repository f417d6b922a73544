package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Each router's own answer, in the shape its documentation and source give, and hostile variants of it. */
class RouterAnswersTest {

    @Test
    void vllmEngineIdsAreNameBasedUuidsOfThePodName() {
        // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org"), the example in Python's own documentation
        assertThat(RouterAnswers.vllmEngineId("python.org")).isEqualTo("886313e1-3b8a-5372-9b90-0c9aee199e5d");
        assertThat(RouterAnswers.vllmEngineId("qwen-server-r1-m0"))
                .isNotEqualTo(RouterAnswers.vllmEngineId("qwen-server-r10-m0"));
    }

    @Test
    void vllmRouterEnginesAreReadByIdFromItsReleasedAnswer() {
        assertThat(RouterAnswers.vllmEngines(RouterFixtures.read("vllm-router/engines.json")))
                .contains(Set.of(
                        RouterAnswers.vllmEngineId("qwen-server-r0-m0"),
                        RouterAnswers.vllmEngineId("qwen-server-r1-m0")));
        assertThat(RouterAnswers.vllmEngines("[]")).contains(Set.of());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "[{\"serving_models\":[\"m\"]}]",
                "[{\"engine_id\":7}]",
                "[{\"engine_id\":null}]",
                "[\"x\"]",
                "[[]]"
            })
    void anEngineWhoseIdCannotBeReadMakesTheWholeListUnreadable(String body) {
        assertThat(RouterAnswers.vllmEngines(body)).isEmpty();
    }

    @Test
    void sglangWorkersAreReadByHostWithTheirLoadFromTheReleasedAnswer() {
        assertThat(RouterAnswers.sglangWorkers(RouterFixtures.read("sglang-gateway/workers.json")))
                .contains(Map.of("10.0.0.1", 3.0, "10.0.0.2", 0.0));
        assertThat(RouterAnswers.sglangWorkerList(RouterFixtures.read("sglang-gateway/workers-pd.json")))
                .contains(List.of(
                        new RouterAnswers.SglangWorker("9a1e3c5b-7d2f-4b6e-8c0a-2e4f6a8c0b13", "10.0.0.4", 1),
                        new RouterAnswers.SglangWorker("c4e6a8b0-1d3f-4a5c-9e7b-3f5a7c9e1b24", "10.0.0.5", 2)));
    }

    static Stream<Arguments> workerUrls() {
        return Stream.of(
                Arguments.of("registered over HTTP", "http://10.0.0.7:8000", Optional.of("10.0.0.7")),
                Arguments.of("registered over gRPC", "grpc://10.0.0.7:8000", Optional.of("10.0.0.7")),
                Arguments.of("scheme in capitals", "HTTP://10.0.0.7:8000", Optional.of("10.0.0.7")),
                Arguments.of("bare, as discovery submits it", "10.0.0.7:8000", Optional.of("10.0.0.7")),
                Arguments.of("a data-parallel rank", "http://10.0.0.7:8000@3", Optional.of("10.0.0.7")),
                Arguments.of("with a path", "http://10.0.0.7:8000/v1", Optional.of("10.0.0.7")),
                Arguments.of("IPv6, bracketed", "http://[fd00:0:0::7]:8000", Optional.of("fd00:0:0:0:0:0:0:7")),
                Arguments.of("a host name", "http://Worker-1.ns.svc:8000", Optional.of("worker-1.ns.svc")),
                Arguments.of("user info hiding the host", "http://10.0.0.7:8000@evil.example", Optional.empty()),
                Arguments.of("IPv6 not bracketed", "http://fd00::7:8000", Optional.empty()),
                Arguments.of("an unclosed bracket", "http://[fd00::7", Optional.empty()),
                Arguments.of("spaces", "not a url", Optional.empty()),
                Arguments.of("empty", "", Optional.empty()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("workerUrls")
    void aWorkersHostIsReadWhateverFormTheGatewayGivesItsUrl(String title, String url, Optional<String> host) {
        assertThat(RouterAnswers.workerHost(url)).isEqualTo(host);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"url\":\"not a url\"}",
                "{\"url\":\"http://[::1\"}",
                "{\"url\":7}",
                "{}",
                "\"http://10.0.0.8:8000\""
            })
    void aWorkerThatCannotBeReadMakesTheWholeListUnreadableForItMightBeTheTarget(String hostile) {
        String body = "{\"workers\":[" + hostile
                + ",{\"id\":\"0b7c5a2e-4f1d-4c8e-9a3b-6d2f8e1c7a90\",\"url\":\"http://10.0.0.9:8000\"}]}";

        assertThat(RouterAnswers.sglangWorkerList(body)).isEmpty();
        assertThat(RouterAnswers.sglangWorkers(body)).isEmpty();
    }

    private static final String TARGET_ID = "5e9d1f3a-2b7c-4e6d-8f0a-1c3b5d7e9f21";
    private static final String OTHER_ID = "0b7c5a2e-4f1d-4c8e-9a3b-6d2f8e1c7a90";

    static Stream<Arguments> removals() {
        RouterAnswers.SglangWorker target = new RouterAnswers.SglangWorker(TARGET_ID, "10.0.0.2", 0);
        RouterAnswers.SglangWorker other = new RouterAnswers.SglangWorker(OTHER_ID, "10.0.0.1", 3);
        return Stream.of(
                Arguments.of(
                        "the target's worker, never another",
                        List.of(other, target),
                        List.of("10.0.0.2"),
                        List.of(TARGET_ID)),
                Arguments.of("nothing when the target is not listed", List.of(other), List.of("10.0.0.2"), List.of()),
                Arguments.of("nothing from an empty list", List.of(), List.of("10.0.0.2"), List.of()),
                Arguments.of("nothing without a target address", List.of(other, target), List.of(), List.of()),
                Arguments.of(
                        "every rank of a data-parallel target, each once and in order",
                        List.of(
                                new RouterAnswers.SglangWorker("ffffffff-0000-4000-8000-000000000002", "10.0.0.2", 0),
                                        target,
                                new RouterAnswers.SglangWorker("00000000-0000-4000-8000-000000000001", "10.0.0.2", 0),
                                        target),
                        List.of("10.0.0.2"),
                        List.of(
                                "00000000-0000-4000-8000-000000000001",
                                TARGET_ID,
                                "ffffffff-0000-4000-8000-000000000002")),
                Arguments.of(
                        "a listed target without a usable id is left for the hold",
                        List.of(new RouterAnswers.SglangWorker("", "10.0.0.2", 0)),
                        List.of("10.0.0.2"),
                        List.of()),
                Arguments.of(
                        "an IPv6 target however it is spelt",
                        List.of(new RouterAnswers.SglangWorker(TARGET_ID, "fd00:0:0:0:0:0:0:7", 0)),
                        List.of("fd00::7"),
                        List.of(TARGET_ID)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("removals")
    void theGatewayIsAskedToRemoveExactlyTheTargetsWorkers(
            String title, List<RouterAnswers.SglangWorker> listed, List<String> targets, List<String> ids) {
        assertThat(RouterAnswers.sglangWorkersToRemove(listed, targets)).containsExactlyElementsOf(ids);
    }

    static Stream<Arguments> additions() {
        RouterAnswers.SglangWorker target = new RouterAnswers.SglangWorker(TARGET_ID, "10.0.0.2", 0);
        RouterAnswers.SglangWorker other = new RouterAnswers.SglangWorker(OTHER_ID, "10.0.0.1", 3);
        return Stream.of(
                Arguments.of(
                        "a member the gateway no longer lists",
                        List.of(other),
                        Map.of("10.0.0.2", "http://10.0.0.2:8000"),
                        List.of("http://10.0.0.2:8000")),
                Arguments.of(
                        "nothing for one it still lists",
                        List.of(other, target),
                        Map.of("10.0.0.2", "http://10.0.0.2:8000"),
                        List.of()),
                Arguments.of(
                        "a listed rank is enough",
                        List.of(new RouterAnswers.SglangWorker("", "10.0.0.2", 0)),
                        Map.of("10.0.0.2", "http://10.0.0.2:8000"),
                        List.of()),
                Arguments.of(
                        "every missing one, in order",
                        List.of(),
                        Map.of("10.0.0.3", "http://10.0.0.3:8000", "10.0.0.2", "http://10.0.0.2:8000"),
                        List.of("http://10.0.0.2:8000", "http://10.0.0.3:8000")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("additions")
    void aRestoredMemberIsAddedBackOnlyWhereTheGatewayListsItNot(
            String title, List<RouterAnswers.SglangWorker> listed, Map<String, String> wanted, List<String> urls) {
        assertThat(RouterAnswers.sglangWorkersToAdd(listed, wanted)).containsExactlyElementsOf(urls);
    }

    @Test
    void anIdThatIsNoUuidIsNeverTakenForOneToRemove() {
        String body = "{\"workers\":[{\"id\":\"../../flush_cache\",\"url\":\"http://10.0.0.2:8000\"}]}";

        assertThat(RouterAnswers.sglangWorkerList(body))
                .contains(List.of(new RouterAnswers.SglangWorker("", "10.0.0.2", 0)));
        assertThat(RouterAnswers.sglangWorkersToRemove(
                        RouterAnswers.sglangWorkerList(body).orElseThrow(), List.of("10.0.0.2")))
                .isEmpty();
    }

    /** The picker's page as llm-d-router v0.10.0 writes it; its provenance is at the head of the file. */
    static String releasedPickerPage() {
        try (InputStream in =
                RouterAnswersTest.class.getResourceAsStream("/routers/llm-d-router/epp-metrics-v0.10.0.txt")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Only the lines of the page whose metric passes, comments and other metrics kept. */
    private static String keepingOnly(String page, Predicate<String> metric) {
        return page.lines()
                .filter(line -> line.startsWith("#") || metric.test(line))
                .collect(Collectors.joining("\n", "", "\n"));
    }

    @Test
    void thePickersReleasedPageGivesItsEndpointsByRankAndItsDecisionsByPod() {
        String page = releasedPickerPage();

        assertThat(RouterAnswers.eppEndpoints(page))
                .contains(Set.of("qwen-server-r0-m0-rank-0", "qwen-server-r1-m0-rank-0"));
        assertThat(RouterAnswers.eppAttempts(page))
                .hasValueSatisfying(a ->
                        assertThat(a).containsEntry("qwen-server-r0-m0", 12.0).containsEntry("qwen-server-r1-m0", 9.0));
        assertThat(RouterAnswers.namesPod("qwen-server-r1-m0-rank-0", "qwen-server-r1-m0"))
                .isTrue();
        assertThat(RouterAnswers.namesPod("qwen-server-r10-m0-rank-0", "qwen-server-r1-m0"))
                .isFalse();
        assertThat(RouterAnswers.namesPod("qwen-server-r10-m0", "qwen-server-r1"))
                .isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"released names alone, inference_", "deprecated names alone, llm_d_epp_", "both generations, (none)"})
    void eitherGenerationOfNamesAloneStillSaysWhatThePickerHolds(String generation, String dropped) {
        String trimmed = keepingOnly(releasedPickerPage(), line -> !line.startsWith(dropped));

        assertThat(RouterAnswers.eppEndpoints(trimmed))
                .contains(Set.of("qwen-server-r0-m0-rank-0", "qwen-server-r1-m0-rank-0"));
        assertThat(RouterAnswers.eppAttempts(trimmed))
                .hasValueSatisfying(a -> assertThat(a).containsEntry("qwen-server-r1-m0", 9.0));
    }

    @Test
    void aPickerThatHoldsNoEndpointsWritesNoGaugeAndHoldsNothing() {
        // the collector emits no series while the datastore is empty, and a counter vector nothing until it counts
        String page = keepingOnly(releasedPickerPage(), line -> line.contains("_info{"));

        assertThat(RouterAnswers.eppEndpoints(page)).contains(Set.of());
        assertThat(RouterAnswers.eppAttempts(page)).contains(Map.of());
    }

    @Test
    void aPageThatIsNotThePickersCannotSayWhatItSelects() {
        assertThat(RouterAnswers.eppEndpoints("process_cpu_seconds_total 4\n")).isEmpty();
        assertThat(RouterAnswers.eppAttempts("process_cpu_seconds_total 4\n")).isEmpty();
        assertThat(RouterAnswers.eppEndpoints("<html>502 Bad Gateway</html>")).isEmpty();
        assertThat(RouterAnswers.eppEndpoints("")).isEmpty();
        assertThat(RouterAnswers.eppEndpoints(null)).isEmpty();
        assertThat(RouterAnswers.eppAttempts(null)).isEmpty();
        // names no release of the picker writes are not its page
        assertThat(
                        RouterAnswers.eppEndpoints(
                                "llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0-rank-0\"} 0\n"))
                .isEmpty();
    }

    @Test
    void anEndpointThePickerHoldsIsSelectedWhateverItsGaugeSays() {
        String page = """
                llm_d_epp_info{build_ref="v0.10.0",commit="unknown"} 1
                llm_d_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r0-m0-rank-0",name="qwen-router"} NaN
                llm_d_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r1-m0-rank-0",name="qwen-router"} -1
                llm_d_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r2-m0-rank-0",name="qwen-router"} +Inf
                """;

        assertThat(RouterAnswers.eppEndpoints(page))
                .contains(Set.of("qwen-server-r0-m0-rank-0", "qwen-server-r1-m0-rank-0", "qwen-server-r2-m0-rank-0"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0-rank-0\"} busy",
                "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0-rank-0\"",
                "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0-rank-0\\\"} 1",
                "llm_d_epp_per_endpoint_queue_s",
                "1f4",
                "\u0000\u0001"
            })
    void aPageWithALineThatCannotBeReadCannotSayWhatItSelects(String unreadable) {
        String page = releasedPickerPage() + unreadable + "\n";

        assertThat(RouterAnswers.eppEndpoints(page)).isEmpty();
        assertThat(RouterAnswers.eppAttempts(page)).isEmpty();
    }

    @Test
    void aDispatchCountThatIsNoNumberCannotSayWhetherThePickerDispatched() {
        String page = releasedPickerPage()
                + "llm_d_epp_scheduler_attempts_total{endpoint_name=\"qwen-server-r2-m0\",namespace=\"team-a\",port=\"8000\","
                + "status=\"success\",target_model_name=\"m\"} NaN\n";

        assertThat(RouterAnswers.eppAttempts(page)).isEmpty();
    }

    @Test
    void hostileEndpointNamesAreReadAsTheyAreAndNameNoOtherPod() {
        String page = """
                llm_d_epp_info{build_ref="v0.10.0",commit="unknown"} 1
                llm_d_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r1-m0\\"} 1",name="x"} 0
                llm_d_epp_per_endpoint_queue_size{model_server_endpoint="",name="x"} 0
                llm_d_epp_per_endpoint_queue_size{name="x"} 0
                llm_d_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r1-m0-rank-"} 0
                """;

        assertThat(RouterAnswers.eppEndpoints(page))
                .hasValueSatisfying(endpoints -> assertThat(endpoints)
                        .noneMatch(
                                e -> e.equals("qwen-server-r1-m0") || RouterAnswers.namesPod(e, "qwen-server-r0-m0")));
    }

    @Test
    void anOversizedPickerPageIsUnreadable() {
        String huge = releasedPickerPage()
                + "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"x\",name=\"p\"} 0\n".repeat(20_000);

        assertThat(huge.length()).isGreaterThan(HttpRouterProbe.MAX_ANSWER_BYTES);
        assertThat(RouterAnswers.eppEndpoints(huge)).isEmpty();
        assertThat(RouterAnswers.eppAttempts(huge)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "null",
                "{",
                "{\"workers\":{}}",
                "{\"workers\":\"x\"}",
                "[1,2",
                "<html></html>",
                "\u0000\u0001"
            })
    void malformedAnswersAreUnreadableNeverAnException(String body) {
        assertThat(RouterAnswers.sglangWorkers(body)).isEmpty();
        assertThat(RouterAnswers.vllmEngines(body.startsWith("[") && body.endsWith("]") ? "{}" : body))
                .isEmpty();
    }

    @Test
    void anOversizedAnswerIsUnreadable() {
        String huge = "[" + "{\"engine_id\":\"x\"},".repeat(300_000) + "{}]";

        assertThat(RouterAnswers.vllmEngines(huge)).isEmpty();
        assertThat(RouterAnswers.sglangWorkers(null)).isEmpty();
    }
}
