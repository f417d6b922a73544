package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
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

    @Test
    void thePickersEndpointsAndAttemptsAreReadFromItsMetricsUnderEitherName() {
        String page = """
                # TYPE llm_d_router_epp_per_endpoint_queue_size gauge
                llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r0-m0",name="pool"} 2
                llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r1-m0-rank-1",name="pool"} 0
                # TYPE llm_d_router_epp_scheduler_attempts_total counter
                llm_d_router_epp_scheduler_attempts_total{endpoint_name="qwen-server-r0-m0",namespace="ns",port="8000",status="success"} 41
                llm_d_router_epp_scheduler_attempts_total{endpoint_name="",namespace="",port="",status="failure"} 3
                inference_extension_scheduler_attempts_total{pod_name="qwen-server-r0-m0",namespace="ns",port="8000",status="success"} 41
                """;

        assertThat(RouterAnswers.eppEndpoints(page)).contains(Set.of("qwen-server-r0-m0", "qwen-server-r1-m0-rank-1"));
        assertThat(RouterAnswers.eppAttempts(page)).hasValueSatisfying(a -> assertThat(a).containsEntry("qwen-server-r0-m0", 41.0));
        assertThat(RouterAnswers.namesPod("qwen-server-r1-m0-rank-1", "qwen-server-r1-m0")).isTrue();
        assertThat(RouterAnswers.namesPod("qwen-server-r10-m0", "qwen-server-r1")).isFalse();
    }

    @Test
    void aPageThatIsNotThePickersCannotSayWhatItSelects() {
        assertThat(RouterAnswers.eppEndpoints("process_cpu_seconds_total 4\n")).isEmpty();
        assertThat(RouterAnswers.eppAttempts("process_cpu_seconds_total 4\n")).isEmpty();
        assertThat(RouterAnswers.eppEndpoints("llm_d_router_epp_ready_endpoints 0\n")).contains(Set.of());
        assertThat(RouterAnswers.eppEndpoints("<html>502 Bad Gateway</html>")).isEmpty();
    }

    @Test
    void anEndpointThePickerHoldsIsSelectedWhateverItsGaugeSays() {
        String page = """
                llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r0-m0"} NaN
                llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r1-m0"} 0
                llm_d_router_epp_scheduler_attempts_total{endpoint_name="qwen-server-r1-m0"} 4
                """;

        assertThat(RouterAnswers.eppEndpoints(page)).contains(Set.of("qwen-server-r0-m0", "qwen-server-r1-m0"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0\"} busy",
        "llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r0-m0\"",
        "llm_d_router_epp_per_endpoint_queue_s",
        "1f4"})
    void aPageWithALineThatCannotBeReadCannotSayWhatItSelects(String unreadable) {
        String page = "llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint=\"qwen-server-r1-m0\"} 0\n" + unreadable + "\n"
                + "llm_d_router_epp_scheduler_attempts_total{endpoint_name=\"qwen-server-r1-m0\"} 4\n";

        assertThat(RouterAnswers.eppEndpoints(page)).isEmpty();
        assertThat(RouterAnswers.eppAttempts(page)).isEmpty();
    }

    @Test
    void aDispatchCountThatIsNoNumberCannotSayWhetherThePickerDispatched() {
        String page = """
                llm_d_router_epp_per_endpoint_queue_size{model_server_endpoint="qwen-server-r1-m0"} 0
                llm_d_router_epp_scheduler_attempts_total{endpoint_name="qwen-server-r0-m0"} NaN
                """;

        assertThat(RouterAnswers.eppAttempts(page)).isEmpty();
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
