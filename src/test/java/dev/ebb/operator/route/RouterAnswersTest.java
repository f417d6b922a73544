package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Each router's own answer, in the shape its documentation and source give, and hostile variants of it. */
class RouterAnswersTest {

    @Test
    void vllmEngineIdsAreNameBasedUuidsOfThePodName() {
        // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org"), the example in Python's own documentation
        assertThat(RouterAnswers.vllmEngineId("python.org")).isEqualTo("886313e1-3b8a-5372-9b90-0c9aee199e5d");
        assertThat(RouterAnswers.vllmEngineId("qwen-server-r1-m0")).isNotEqualTo(RouterAnswers.vllmEngineId("qwen-server-r10-m0"));
    }

    @Test
    void vllmRouterEnginesAreReadById() {
        String body = "[{\"engine_id\":\"" + RouterAnswers.vllmEngineId("qwen-server-r0-m0")
                + "\",\"serving_models\":[\"Qwen/Qwen3-8B\"],\"created\":1764000000}]";

        assertThat(RouterAnswers.vllmEngines(body)).contains(Set.of(RouterAnswers.vllmEngineId("qwen-server-r0-m0")));
        assertThat(RouterAnswers.vllmEngines("[]")).contains(Set.of());
    }

    @Test
    void sglangWorkersAreReadByHostWithTheirRequestCounts() {
        String body = "{\"workers\":[{\"url\":\"http://10.0.0.7:8000\",\"healthy\":true,\"model\":\"m\",\"requests_total\":15234,"
                + "\"requests_active\":5},{\"url\":\"http://10.0.0.8:8000\",\"healthy\":false}],\"total\":2,\"healthy\":1}";

        assertThat(RouterAnswers.sglangWorkers(body)).contains(Map.of("10.0.0.7", 15234.0, "10.0.0.8", 0.0));
    }

    /** The picker's page as llm-d-router v0.10.0 writes it; its provenance is at the head of the file. */
    static String releasedPickerPage() {
        try (InputStream in = RouterAnswersTest.class.getResourceAsStream("/routers/llm-d-router/epp-metrics-v0.10.0.txt")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Only the lines of the page whose metric passes, comments and other metrics kept. */
    private static String keepingOnly(String page, Predicate<String> metric) {
        return page.lines().filter(line -> line.startsWith("#") || metric.test(line)).collect(Collectors.joining("\n", "", "\n"));
    }

    @Test
    void thePickersReleasedPageGivesItsEndpointsByRankAndItsDecisionsByPod() {
        String page = releasedPickerPage();

        assertThat(RouterAnswers.eppEndpoints(page)).contains(Set.of("qwen-server-r0-m0-rank-0", "qwen-server-r1-m0-rank-0"));
        assertThat(RouterAnswers.eppAttempts(page)).hasValueSatisfying(a -> assertThat(a)
                .containsEntry("qwen-server-r0-m0", 12.0)
                .containsEntry("qwen-server-r1-m0", 9.0));
        assertThat(RouterAnswers.namesPod("qwen-server-r1-m0-rank-0", "qwen-server-r1-m0")).isTrue();
        assertThat(RouterAnswers.namesPod("qwen-server-r10-m0-rank-0", "qwen-server-r1-m0")).isFalse();
        assertThat(RouterAnswers.namesPod("qwen-server-r10-m0", "qwen-server-r1")).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "released names alone, inference_",
        "deprecated names alone, llm_d_epp_",
        "both generations, (none)"})
    void eitherGenerationOfNamesAloneStillSaysWhatThePickerHolds(String generation, String dropped) {
        String trimmed = keepingOnly(releasedPickerPage(), line -> !line.startsWith(dropped));

        assertThat(RouterAnswers.eppEndpoints(trimmed)).contains(Set.of("qwen-server-r0-m0-rank-0", "qwen-server-r1-m0-rank-0"));
        assertThat(RouterAnswers.eppAttempts(trimmed)).hasValueSatisfying(a -> assertThat(a).containsEntry("qwen-server-r1-m0", 9.0));
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
        assertThat(RouterAnswers.eppEndpoints("llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0-rank-0\"} 0\n"))
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
    @ValueSource(strings = {
        "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0-rank-0\"} busy",
        "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0-rank-0\"",
        "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0-rank-0\\\"} 1",
        "llm_d_epp_per_endpoint_queue_s",
        "1f4",
        "\u0000\u0001"})
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

        assertThat(RouterAnswers.eppEndpoints(page)).hasValueSatisfying(endpoints -> assertThat(endpoints)
                .noneMatch(e -> e.equals("qwen-server-r1-m0") || RouterAnswers.namesPod(e, "qwen-server-r0-m0")));
    }

    @Test
    void anOversizedPickerPageIsUnreadable() {
        String huge = releasedPickerPage() + "llm_d_epp_per_endpoint_queue_size{model_server_endpoint=\"x\",name=\"p\"} 0\n".repeat(20_000);

        assertThat(huge.length()).isGreaterThan(HttpRouterProbe.MAX_ANSWER_BYTES);
        assertThat(RouterAnswers.eppEndpoints(huge)).isEmpty();
        assertThat(RouterAnswers.eppAttempts(huge)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "null", "{", "{\"workers\":{}}", "{\"workers\":\"x\"}", "[1,2", "<html></html>", "\u0000\u0001"})
    void malformedAnswersAreUnreadableNeverAnException(String body) {
        assertThat(RouterAnswers.sglangWorkers(body)).isEmpty();
        assertThat(RouterAnswers.vllmEngines(body.startsWith("[") && body.endsWith("]") ? "{}" : body)).isEmpty();
    }

    @Test
    void anOversizedAnswerIsUnreadable() {
        String huge = "[" + "{\"engine_id\":\"x\"},".repeat(300_000) + "{}]";

        assertThat(RouterAnswers.vllmEngines(huge)).isEmpty();
        assertThat(RouterAnswers.sglangWorkers(null)).isEmpty();
    }

    @Test
    void hostileWorkerUrlsAreSkipped() {
        String body = "{\"workers\":[{\"url\":\"not a url\"},{\"url\":\"http://[::1\"},{\"url\":\"http://10.0.0.9:8000\"}]}";

        assertThat(RouterAnswers.sglangWorkers(body)).contains(Map.of("10.0.0.9", 0.0));
    }
}
