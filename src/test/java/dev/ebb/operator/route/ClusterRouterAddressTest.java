package dev.ebb.operator.route;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.net.URI;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each router Pod is asked at its own IP, on the port and path its router answers at; nothing else is resolved. */
class ClusterRouterAddressTest {
    private static Pod at(String ip) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("qwen-router-7d9f-x2x4q")
                .endMetadata()
                .withNewStatus()
                .withPodIP(ip)
                .endStatus()
                .build();
    }

    static Stream<Arguments> addresses() {
        return Stream.of(
                Arguments.of(RouterKind.LLM_D_ROUTER, "10.244.1.7", Optional.of("http://10.244.1.7:9090/metrics")),
                Arguments.of(RouterKind.VLLM_ROUTER, "10.244.1.7", Optional.of("http://10.244.1.7:8001/engines")),
                Arguments.of(RouterKind.SGLANG_GATEWAY, "10.244.1.7", Optional.of("http://10.244.1.7:30000/workers")),
                Arguments.of(
                        RouterKind.VLLM_ROUTER, "fd00:10:244::7", Optional.of("http://[fd00:10:244::7]:8001/engines")),
                Arguments.of(RouterKind.VLLM_ROUTER, "metadata.google.internal", Optional.empty()),
                Arguments.of(RouterKind.VLLM_ROUTER, "10.0.0.1/evil?x=", Optional.empty()),
                Arguments.of(RouterKind.VLLM_ROUTER, "10.0.0.1:9", Optional.empty()),
                Arguments.of(RouterKind.VLLM_ROUTER, "999.1.1.1", Optional.empty()),
                Arguments.of(RouterKind.VLLM_ROUTER, "fd00::1%eth0", Optional.empty()),
                Arguments.of(RouterKind.VLLM_ROUTER, "", Optional.empty()),
                Arguments.of(RouterKind.VLLM_ROUTER, null, Optional.empty()));
    }

    @ParameterizedTest(name = "{0} at {1}")
    @MethodSource("addresses")
    void askedAtItsOwnIpLiteralOnly(RouterKind kind, String podIp, Optional<String> expected) {
        assertThat(new ClusterRouterAddress().of(at(podIp), kind)).isEqualTo(expected.map(URI::create));
    }
}
