package dev.ebb.operator.route;

import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Pod;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * Asks each Pod of SGLang's model gateway to stop sending to withdrawn members, through its worker API (smg v1.9.0,
 * model_gateway/src/server.rs: {@code GET /workers} and {@code DELETE /workers/{worker_id}}). The gateway would
 * otherwise keep a Pod whose serving label went false until its next relist, up to 60 s later.
 *
 * <p>Each router Pod is asked at its own address for its own list, and only the ids that Pod lists for a target's IP
 * are deleted there (which ids is {@link RouterAnswers#sglangWorkersToRemove}'s to decide). The gateway does not add
 * such a worker back: its watch hands on only Pods that still match its selector, and its relist removes what no
 * longer matches (service_discovery.rs, start_service_discovery and reconcile_pods). The removal is a queued job
 * (worker/service.rs, delete_worker answers 202 once it is queued), so nothing here counts as withdrawn: the
 * retirement reads the gateway's lists again and sees the worker gone, or asks again on its next pass.
 */
final class SglangWorkerRemoval {
    private static final Logger LOG = Logger.getLogger(SglangWorkerRemoval.class);
    /** What {@code DeleteWorkerResult} answers once the removal job is queued. */
    static final int QUEUED = 202;
    /** More removals than a Pod has data-parallel ranks would come from a list no gateway writes; they wait for later passes. */
    static final int MAX_REMOVALS_PER_POD = 64;

    /** What became of one request to remove a worker. */
    enum Outcome {
        QUEUED, NOT_FOUND, REFUSED, UNANSWERED
    }

    /** One removal asked of one router Pod. */
    record Removal(String routerPod, String workerId, Outcome outcome) {
    }

    private final RouterAddress address;
    private final HttpClient http;

    SglangWorkerRemoval(RouterAddress address, HttpClient http) {
        this.address = address;
        this.http = http;
    }

    /**
     * Asks every router Pod that can be asked; one that cannot be is skipped, since the retirement's read of the
     * lists holds it anyway. Like the probe's reads, every answer is bounded to 1 MiB, and each round (the lists, then
     * the removals) is sent at once to every Pod and bounded to 2 s as a whole, so many router Pods take no longer.
     *
     * @param members the target members; those without an IP have nothing the gateway could list
     */
    List<Removal> remove(Collection<Pod> routerPods, List<Pod> members) {
        List<String> targetIps = members.stream().map(SglangGatewayDialect::ip).filter(Objects::nonNull).toList();
        if (targetIps.isEmpty() || !(RouterReplicas.toAsk(routerPods) instanceof RouterReplicas.Ask ask)) {
            return List.of();
        }
        Map<Pod, URI> lists = new LinkedHashMap<>();
        ask.pods().forEach(pod -> address.of(pod, RouterKind.SGLANG_GATEWAY).ifPresent(uri -> lists.put(pod, uri)));
        Map<Pod, Exchange> listing = new LinkedHashMap<>();
        lists.forEach((pod, uri) -> listing.put(pod, send(HttpRequest.newBuilder(uri).timeout(HttpRouterProbe.ANSWER_TIME).GET().build())));
        long listed = System.nanoTime() + HttpRouterProbe.ANSWER_TIME.toNanos();

        Map<Removal, Exchange> deleting = new LinkedHashMap<>();
        listing.forEach((pod, exchange) -> {
            Optional<List<RouterAnswers.SglangWorker>> workers = exchange.answer(listed).filter(response -> response.statusCode() == 200)
                    .map(response -> new String(response.body(), StandardCharsets.UTF_8)).flatMap(RouterAnswers::sglangWorkerList);
            if (workers.isEmpty()) {
                LOG.debugf("gateway Pod %s did not list its workers; nothing removed there", pod.getMetadata().getName());
                return;
            }
            URI base = lists.get(pod);
            RouterAnswers.sglangWorkersToRemove(workers.get(), targetIps).stream().limit(MAX_REMOVALS_PER_POD).forEach(id ->
                    deleting.put(new Removal(pod.getMetadata().getName(), id, Outcome.UNANSWERED),
                            send(HttpRequest.newBuilder(base.resolve(base.getPath() + "/" + id)).timeout(HttpRouterProbe.ANSWER_TIME).DELETE().build())));
        });
        long deleted = System.nanoTime() + HttpRouterProbe.ANSWER_TIME.toNanos();

        List<Removal> removals = new ArrayList<>();
        deleting.forEach((asked, exchange) -> removals.add(new Removal(asked.routerPod(), asked.workerId(), exchange.answer(deleted)
                .map(response -> switch (response.statusCode()) {
                    case QUEUED -> Outcome.QUEUED;
                    case 404 -> Outcome.NOT_FOUND;
                    default -> Outcome.REFUSED;
                })
                .orElse(Outcome.UNANSWERED))));
        removals.stream().filter(r -> r.outcome() != Outcome.QUEUED)
                .forEach(r -> LOG.infof("gateway Pod %s did not queue the removal of worker %s: %s", r.routerPod(), r.workerId(), r.outcome()));
        return List.copyOf(removals);
    }

    private Exchange send(HttpRequest request) {
        HttpRouterProbe.CappedBody body = new HttpRouterProbe.CappedBody(HttpRouterProbe.MAX_ANSWER_BYTES);
        try {
            return new Exchange(request, body, http.sendAsync(request, info -> body));
        } catch (IllegalArgumentException e) {
            return new Exchange(request, body, CompletableFuture.failedFuture(e));
        }
    }

    /** One request under way. */
    private record Exchange(HttpRequest request, HttpRouterProbe.CappedBody body, CompletableFuture<HttpResponse<byte[]>> response) {
        /** The whole answer by the deadline, or empty; never an exception. Either way the exchange is over after. */
        Optional<HttpResponse<byte[]>> answer(long deadlineNanos) {
            try {
                return Optional.of(response.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (TimeoutException | ExecutionException e) {
                LOG.debugf("gateway at %s, %s: %s", request.uri(), request.method(), e.getClass().getSimpleName());
                return Optional.empty();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            } finally {
                body.abandon();
                response.cancel(true);
            }
        }
    }
}
