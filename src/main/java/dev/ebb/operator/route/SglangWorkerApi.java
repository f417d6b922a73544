package dev.ebb.operator.route;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import org.jboss.logging.Logger;

/**
 * SGLang's model gateway told through its worker API (smg v1.9.0, model_gateway/src/server.rs: {@code GET /workers},
 * {@code POST /workers}, {@code DELETE /workers/{worker_id}}) what its discovery would learn late, or never.
 *
 * <p>Removal: the gateway keeps a Pod whose serving label went false until its relist, up to 60 s later. Each router
 * Pod is asked at its own address for its own list, and only the ids that Pod lists at a target's IP are deleted there
 * (which ids is {@link RouterAnswers#sglangWorkersToRemove}'s to decide). The gateway does not add such a worker back
 * while the Pod stays withdrawn: its watch hands on only Pods that still match its selector, and its relist removes
 * what no longer matches (service_discovery.rs, start_service_discovery and reconcile_pods). The removal is a queued
 * job (worker/service.rs, delete_worker answers 202 once it is queued), so nothing here counts as withdrawn: the
 * retirement reads the gateway's lists again, and asks again on its next pass while they still name the target.
 *
 * <p>Restoring: a Pod given back its serving label is added back by the gateway's discovery only if its relist
 * dropped it meanwhile; one removed here before that relist stays among the Pods the discovery believes it holds
 * (its tracked set, keyed by name and uid, service_discovery.rs handle_pod_event), so it would never be added again.
 * So a Pod restored that a gateway Pod does not list is added back there, as {@code POST /workers} takes it
 * (worker/service.rs create_worker: a url with its scheme, 202 once queued, 409 when that url is already a worker).
 */
final class SglangWorkerApi {
    private static final Logger LOG = Logger.getLogger(SglangWorkerApi.class);
    /** What the gateway answers once it has queued the job that adds or removes a worker. */
    static final int ACCEPTED = 202;
    /** More requests than a Pod has data-parallel ranks would come from a list no gateway writes; they wait for later passes. */
    static final int MAX_REQUESTS_PER_POD = 64;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What became of one request. */
    enum Outcome {
        QUEUED,
        NOT_FOUND,
        ALREADY_THERE,
        REFUSED,
        UNANSWERED
    }

    /**
     * One request asked of one router Pod.
     *
     * @param subject the worker id removed, or the url of the worker added back
     */
    record Asked(String routerPod, String subject, Outcome outcome) {}

    private final RouterAddress address;
    private final HttpClient http;

    SglangWorkerApi(RouterAddress address, HttpClient http) {
        this.address = address;
        this.http = http;
    }

    /**
     * Removes the targets' workers from every gateway Pod that lists them.
     *
     * @param members the target members; those without an IP have nothing the gateway could list
     */
    List<Asked> remove(Collection<Pod> routerPods, List<Pod> members) {
        List<String> targetIps = members.stream()
                .map(SglangGatewayDialect::ip)
                .filter(Objects::nonNull)
                .toList();
        if (targetIps.isEmpty()) {
            return List.of();
        }
        return askEach(
                routerPods,
                (workers, listed) -> RouterAnswers.sglangWorkersToRemove(listed, targetIps).stream()
                        .limit(MAX_REQUESTS_PER_POD)
                        .map(id -> removal(workers, id))
                        .toList());
    }

    /**
     * Adds the restored members back to every gateway Pod that does not list them, each as the worker the gateway's
     * own discovery would have made of it ({@link GatewayMembership#workerUrl}): a follower, a Pod not ready or one of
     * a prefill or decode role is no worker of its own.
     */
    List<Asked> restore(Collection<Pod> routerPods, List<Pod> members) {
        Map<String, String> wanted = new LinkedHashMap<>();
        for (Pod member : members) {
            Optional<String> host =
                    Optional.ofNullable(SglangGatewayDialect.ip(member)).flatMap(RouterAnswers::normalHost);
            GatewayMembership.workerUrl(member).ifPresent(url -> wanted.put(host.orElseThrow(), url));
        }
        if (wanted.isEmpty()) {
            return List.of();
        }
        return askEach(
                routerPods,
                (workers, listed) -> RouterAnswers.sglangWorkersToAdd(listed, wanted).stream()
                        .limit(MAX_REQUESTS_PER_POD)
                        .map(url -> addition(workers, url))
                        .toList());
    }

    /** A request to send to one gateway Pod, about one worker. */
    private record Request(String subject, HttpRequest request) {}

    /**
     * Each gateway Pod's list of workers, for {@link GatewayMembership}: a Pod that is not ready or has no address is
     * listed as unread. Sent at once to every Pod and bounded to 2 s as a whole.
     */
    List<GatewayMembership.Listing> list(Collection<Pod> routerPods) {
        // a Pod that has never run holds no list of its own yet: its discovery starts from the labels
        List<Pod> running = routerPods.stream()
                .filter(RouterReplicas::mayHaveRouted)
                .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .toList();
        Map<String, Listed> listed =
                listEach(running.stream().filter(Readiness::isPodReady).toList());
        return running.stream()
                .map(pod -> pod.getMetadata().getName())
                .map(pod -> new GatewayMembership.Listing(
                        pod, Optional.ofNullable(listed.get(pod)).flatMap(Listed::workers)))
                .toList();
    }

    /** Sends each gateway Pod the removals and additions the plan names for it. */
    List<Asked> tell(Collection<Pod> routerPods, GatewayMembership.Plan plan) {
        Map<String, URI> uris = new LinkedHashMap<>();
        routerPods.forEach(pod -> address.of(pod, RouterKind.SGLANG_GATEWAY)
                .ifPresent(uri -> uris.put(pod.getMetadata().getName(), uri)));
        Map<String, List<Request>> requests = new LinkedHashMap<>();
        uris.forEach((pod, workers) -> {
            List<Request> toSend = new ArrayList<>();
            plan.remove().getOrDefault(pod, List.of()).stream()
                    .map(id -> removal(workers, id))
                    .forEach(toSend::add);
            plan.add().getOrDefault(pod, List.of()).stream()
                    .map(url -> addition(workers, url))
                    .forEach(toSend::add);
            requests.put(pod, toSend.stream().limit(MAX_REQUESTS_PER_POD).toList());
        });
        return sendEach(requests);
    }

    private static Request removal(URI workers, String id) {
        return new Request(
                id,
                HttpRequest.newBuilder(workers.resolve(workers.getPath() + "/" + id))
                        .timeout(HttpRouterProbe.ANSWER_TIME)
                        .DELETE()
                        .build());
    }

    private static Request addition(URI workers, String url) {
        return new Request(
                url,
                HttpRequest.newBuilder(workers)
                        .timeout(HttpRouterProbe.ANSWER_TIME)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(
                                JSON.createObjectNode().put("url", url).toString()))
                        .build());
    }

    /** One gateway Pod's address and its list, empty when it could not be read. */
    private record Listed(URI uri, Optional<List<RouterAnswers.SglangWorker>> workers) {}

    /**
     * Lists every gateway Pod that can be asked, then sends each the requests its own list calls for. One that cannot
     * be asked, or whose list cannot be read, is skipped, since the retirement's read of the lists holds it anyway.
     * Like the probe's reads, every answer is bounded to 1 MiB, and each round (the lists, then the requests) is sent
     * at once to every Pod and bounded to 2 s as a whole, so many router Pods take no longer.
     */
    private List<Asked> askEach(
            Collection<Pod> routerPods, BiFunction<URI, List<RouterAnswers.SglangWorker>, List<Request>> requests) {
        if (!(RouterReplicas.toAsk(routerPods) instanceof RouterReplicas.Ask ask)) {
            return List.of();
        }
        Map<String, List<Request>> toSend = new LinkedHashMap<>();
        listEach(ask.pods()).forEach((pod, listed) -> {
            if (listed.workers().isEmpty()) {
                LOG.debugf("gateway Pod %s did not list its workers; nothing asked of it", pod);
                return;
            }
            toSend.put(pod, requests.apply(listed.uri(), listed.workers().get()));
        });
        return sendEach(toSend);
    }

    private Map<String, Listed> listEach(Collection<Pod> pods) {
        Map<String, URI> lists = new LinkedHashMap<>();
        pods.forEach(pod -> address.of(pod, RouterKind.SGLANG_GATEWAY)
                .ifPresent(uri -> lists.put(pod.getMetadata().getName(), uri)));
        Map<String, Exchange> listing = new LinkedHashMap<>();
        lists.forEach((pod, uri) -> listing.put(
                pod,
                send(HttpRequest.newBuilder(uri)
                        .timeout(HttpRouterProbe.ANSWER_TIME)
                        .GET()
                        .build())));
        long listed = System.nanoTime() + HttpRouterProbe.ANSWER_TIME.toNanos();
        Map<String, Listed> answers = new LinkedHashMap<>();
        listing.forEach((pod, exchange) -> answers.put(
                pod,
                new Listed(
                        lists.get(pod),
                        exchange.answer(listed)
                                .filter(response -> response.statusCode() == 200)
                                .map(response -> new String(response.body(), StandardCharsets.UTF_8))
                                .flatMap(RouterAnswers::sglangWorkerList))));
        return answers;
    }

    private List<Asked> sendEach(Map<String, List<Request>> requests) {
        Map<Asked, Exchange> sent = new LinkedHashMap<>();
        requests.forEach((pod, toSend) -> toSend.forEach(
                request -> sent.put(new Asked(pod, request.subject(), Outcome.UNANSWERED), send(request.request()))));
        long answered = System.nanoTime() + HttpRouterProbe.ANSWER_TIME.toNanos();

        List<Asked> asked = new ArrayList<>();
        sent.forEach((request, exchange) -> asked.add(new Asked(
                request.routerPod(),
                request.subject(),
                exchange.answer(answered)
                        .map(response -> switch (response.statusCode()) {
                            case ACCEPTED -> Outcome.QUEUED;
                            case 404 -> Outcome.NOT_FOUND;
                            case 409 -> Outcome.ALREADY_THERE;
                            default -> Outcome.REFUSED;
                        })
                        .orElse(Outcome.UNANSWERED))));
        asked.stream()
                .filter(a -> a.outcome() != Outcome.QUEUED && a.outcome() != Outcome.ALREADY_THERE)
                .forEach(a -> LOG.infof(
                        "gateway Pod %s did not queue the request about worker %s: %s",
                        a.routerPod(), a.subject(), a.outcome()));
        return List.copyOf(asked);
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
    private record Exchange(
            HttpRequest request, HttpRouterProbe.CappedBody body, CompletableFuture<HttpResponse<byte[]>> response) {
        /** The whole answer by the deadline, or empty; never an exception. Either way the exchange is over after. */
        Optional<HttpResponse<byte[]>> answer(long deadlineNanos) {
            try {
                return Optional.of(response.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (TimeoutException | ExecutionException e) {
                LOG.debugf(
                        "gateway at %s, %s: %s",
                        request.uri(), request.method(), e.getClass().getSimpleName());
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
