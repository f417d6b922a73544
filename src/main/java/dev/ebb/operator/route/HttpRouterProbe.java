package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Pod;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * Asks each of the router's Pods itself, over HTTP at its admin path, what it routes to, and reads every answer in
 * that router's dialect. The Pods are asked at once, under one deadline, so a router of many replicas takes no longer
 * to ask than one. Any answer it cannot get or read is "cannot tell", never "withdrawn".
 */
@ApplicationScoped
public class HttpRouterProbe implements RouterProbe {
    /**
     * A router's whole answer, connection, headers and body, must arrive within this time and size: the thread that
     * waits for it reconciles every namespace, and a router that drips or floods must not hold it.
     */
    static final Duration ANSWER_TIME = Duration.ofSeconds(2);

    static final int MAX_ANSWER_BYTES = 1024 * 1024;
    private static final Logger LOG = Logger.getLogger(HttpRouterProbe.class);

    private final RouterAddress address;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(ANSWER_TIME).build();
    private final Map<RouterKind, RouterDialect> dialects = new EnumMap<>(Map.of(
            RouterKind.LLM_D_ROUTER, new LlmDRouterDialect(),
            RouterKind.VLLM_ROUTER, new VllmRouterDialect(),
            RouterKind.SGLANG_GATEWAY, new SglangGatewayDialect()));

    private final SglangWorkerApi sglangWorkers;

    public HttpRouterProbe(RouterAddress address) {
        this.address = address;
        this.sglangWorkers = new SglangWorkerApi(address, http);
    }

    /** SGLang's gateway alone needs telling: it would see the withdrawal only at its next relist. */
    @Override
    public void withdraw(ModelDeployment deployment, Collection<Pod> routerPods, List<Pod> members) {
        if (isSglangGateway(deployment)) {
            sglangWorkers.remove(routerPods, members);
        }
    }

    /** SGLang's gateway alone needs telling: a worker removed before its relist would never come back by itself. */
    @Override
    public void restore(ModelDeployment deployment, Collection<Pod> routerPods, List<Pod> members) {
        if (isSglangGateway(deployment)) {
            sglangWorkers.restore(routerPods, members);
        }
    }

    @Override
    public Optional<List<GatewayMembership.Listing>> workerLists(
            ModelDeployment deployment, Collection<Pod> routerPods) {
        return isSglangGateway(deployment) ? Optional.of(sglangWorkers.list(routerPods)) : Optional.empty();
    }

    @Override
    public void tell(ModelDeployment deployment, Collection<Pod> routerPods, GatewayMembership.Plan plan) {
        if (isSglangGateway(deployment) && !plan.nothingToSend()) {
            sglangWorkers.tell(routerPods, plan);
        }
    }

    private static boolean isSglangGateway(ModelDeployment deployment) {
        return Optional.ofNullable(deployment.getSpec().router())
                .flatMap(r -> RouterKind.fromWireName(r.name()))
                .filter(RouterKind.SGLANG_GATEWAY::equals)
                .isPresent();
    }

    @Override
    public RouterView view(ModelDeployment deployment, Collection<Pod> routerPods, List<Pod> members) {
        Optional<RouterKind> kind =
                Optional.ofNullable(deployment.getSpec().router()).flatMap(r -> RouterKind.fromWireName(r.name()));
        if (kind.isEmpty()) {
            return RouterView.unavailable("the deployment names no router this operator knows");
        }
        RouterReplicas.Decision decision = RouterReplicas.toAsk(routerPods);
        if (decision instanceof RouterReplicas.CannotTell cannotTell) {
            LOG.debugf(
                    "router of %s/%s cannot be asked: %s",
                    deployment.getMetadata().getNamespace(),
                    deployment.getMetadata().getName(),
                    cannotTell.why());
            return RouterView.unavailable(cannotTell.why());
        }
        List<Pod> replicas = ((RouterReplicas.Ask) decision).pods();
        List<URI> uris = new ArrayList<>();
        for (Pod replica : replicas) {
            Optional<URI> uri = address.of(replica, kind.get());
            if (uri.isEmpty()) {
                LOG.debugf(
                        "router Pod %s has no address to ask",
                        replica.getMetadata().getName());
                return RouterView.unavailable(
                        "router Pod " + replica.getMetadata().getName() + " has no address to ask");
            }
            uris.add(uri.get());
        }
        long deadline = System.nanoTime() + ANSWER_TIME.toNanos();
        List<Asking> asked = uris.stream().map(this::ask).toList();
        try {
            Map<String, RouterView> views = new LinkedHashMap<>();
            for (int i = 0; i < replicas.size(); i++) {
                Answer answer = asked.get(i).answer(deadline);
                String replica = replicas.get(i).getMetadata().getName();
                if (answer.body().isEmpty()) {
                    return RouterView.unavailable("router Pod " + replica + " " + answer.failure());
                }
                views.put(replica, dialects.get(kind.get()).read(answer.body().get(), members));
            }
            return RouterView.allOf(views);
        } finally {
            asked.forEach(Asking::abandon);
        }
    }

    private Asking ask(URI uri) {
        CappedBody body = new CappedBody(MAX_ANSWER_BYTES);
        try {
            return new Asking(
                    uri,
                    body,
                    http.sendAsync(
                            HttpRequest.newBuilder(uri)
                                    .timeout(ANSWER_TIME)
                                    .GET()
                                    .build(),
                            info -> body));
        } catch (IllegalArgumentException e) {
            return new Asking(uri, body, CompletableFuture.failedFuture(e));
        }
    }

    /** A router Pod's page, or why there is none: its status, its silence, or the error that ended the exchange. */
    private record Answer(Optional<String> body, String failure) {
        static Answer failed(String failure) {
            return new Answer(Optional.empty(), failure);
        }
    }

    /** One router Pod being asked. */
    private record Asking(URI uri, CappedBody body, CompletableFuture<HttpResponse<byte[]>> exchange) {
        /**
         * The answer, when it is a 200 read whole by the deadline and within {@link #MAX_ANSWER_BYTES}. The request's
         * own timeout ends at the headers, so the whole exchange is bounded here.
         */
        Answer answer(long deadlineNanos) {
            try {
                HttpResponse<byte[]> response =
                        exchange.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (response.statusCode() != 200) {
                    LOG.debugf("router at %s answered %d", uri, response.statusCode());
                    return Answer.failed("answered HTTP " + response.statusCode());
                }
                return new Answer(Optional.of(new String(response.body(), StandardCharsets.UTF_8)), "");
            } catch (TimeoutException e) {
                LOG.debugf("router at %s did not answer whole within %s", uri, ANSWER_TIME);
                return Answer.failed("did not answer within " + ANSWER_TIME.toSeconds() + " s");
            } catch (ExecutionException e) {
                LOG.debugf(
                        "router at %s could not be asked: %s", uri, e.getCause().getMessage());
                return Answer.failed(
                        "could not be asked (" + e.getCause().getClass().getSimpleName() + ")");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Answer.failed("was not asked: the operator is stopping");
            }
        }

        /** Stops reading a router that is still sending, so that its connection is not held open. */
        void abandon() {
            body.abandon();
            exchange.cancel(true);
        }
    }

    /** Collects an answer up to a cap; past it, or when abandoned, it stops reading and fails. */
    static final class CappedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final int cap;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final CompletableFuture<byte[]> whole = new CompletableFuture<>();
        private volatile Flow.Subscription subscription;

        CappedBody(int cap) {
            this.cap = cap;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> buffers) {
            if (whole.isDone()) {
                return;
            }
            for (ByteBuffer buffer : buffers) {
                if (bytes.size() + buffer.remaining() > cap) {
                    subscription.cancel();
                    whole.completeExceptionally(new IOException("answer over " + cap + " bytes"));
                    return;
                }
                byte[] chunk = new byte[buffer.remaining()];
                buffer.get(chunk);
                bytes.writeBytes(chunk);
            }
        }

        @Override
        public void onError(Throwable error) {
            whole.completeExceptionally(error);
        }

        @Override
        public void onComplete() {
            whole.complete(bytes.toByteArray());
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return whole;
        }

        void abandon() {
            Flow.Subscription s = subscription;
            if (s != null && !whole.isDone()) {
                s.cancel();
                whole.cancel(false);
            }
        }
    }
}
