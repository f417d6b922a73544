package dev.ebb.operator.cluster;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.net.URI;
import java.util.List;

/** A client that keeps the HTTP request line of every request it sends, as a proxy or an audit log would see it. */
final class RequestLines {
    private RequestLines() {}

    static KubernetesClient recording(Config config, List<String> lines) {
        Interceptor recorder = new Interceptor() {
            @Override
            public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                lines.add(requestLine(request.method(), request.uri()));
            }
        };
        return new KubernetesClientBuilder()
                .withConfig(config)
                .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("request-lines", recorder))
                .build();
    }

    static String requestLine(String method, URI uri) {
        return method + " " + uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())
                + " HTTP/1.1";
    }
}
