package dev.ebb.operator.render;

import dev.ebb.operator.api.v1alpha1.RouterKind;

/**
 * Where each router answers what it routes to: the port and the path. One home for these, shared by the probe that
 * asks each router Pod and the renderer that exposes them.
 *
 * @param port the port each router Pod serves the answer on; its Service exposes the same
 * @param path what to GET there
 */
public record RouterAdmin(int port, String path) {
    /**
     * llm-d's endpoint picker exposes nothing but metrics per endpoint (its debug routes answer only on loopback),
     * on its metrics port, 9090 by default and in the chart (pkg/epp/server/options.go MetricsPort and
     * config/charts/routerlib/templates/_deployment.yaml at llm-d-router v0.10.0), served at /metrics by
     * controller-runtime's metrics server, read without a token since the layout turns --metrics-endpoint-auth off;
     * vLLM's router lists its engines at {@code /engines} on its API port; SGLang's gateway
     * lists its workers at {@code /workers} on its API port.
     */
    public static RouterAdmin of(RouterKind kind) {
        return switch (kind) {
            case LLM_D_ROUTER -> new RouterAdmin(9090, "/metrics");
            case VLLM_ROUTER -> new RouterAdmin(8001, "/engines");
            case SGLANG_GATEWAY -> new RouterAdmin(30000, "/workers");
        };
    }
}
