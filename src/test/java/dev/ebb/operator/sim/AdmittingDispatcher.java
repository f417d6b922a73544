package dev.ebb.operator.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRule;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectRulesReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.VersionInfo;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.zjsonpatch.JsonPatch;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * The mock API server's CRUD store with admission in front of it for one custom resource: creates, updates and
 * patches of its objects are checked by {@link CrdAdmission} and refused with HTTP 422, as an API server would. A
 * delete whose preconditions name a uid other than the object's is refused with 409, as an API server does. The
 * resource's scale subresource, when its CRD declares one, is served as an API server serves it ({@link #scale}). A
 * SelfSubjectRulesReview is answered from the rules the caller was {@link #grant granted} (none unless told), and
 * GET /version with the {@link #version release} it is told. It can be made to {@link #fail fail} chosen requests, as
 * a loaded or restarting API server does, or to {@link #answerLate answer them late}, until the fault is lifted; to treat one caller {@link #unreliable
 * unreliably}; and to {@link #expireWatches expire} every open watch, as an API server whose watch cache no longer
 * holds a watcher's resource version does, so that informers list again.
 */
public final class AdmittingDispatcher extends KubernetesCrudDispatcher {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
    private static final Pattern POD = Pattern.compile("^/api/v1/namespaces/[^/]+/pods/[^/?]+(\\?.*)?$");
    private static final Pattern EVICTION = Pattern.compile("^/api/v1/namespaces/[^/]+/pods/[^/?]+/eviction$");
    /** What the API server defaults a Pod's terminationGracePeriodSeconds to. */
    private static final long DEFAULT_GRACE_SECONDS = 30;

    private final CrdAdmission admission;
    private final Pattern guarded;
    private final Pattern scalePath;
    private final java.util.Optional<ScaleSubresource> scale;
    /** The resource as the API server names it in its messages: plural.group. */
    private final String resource;

    private volatile List<ResourceRule> granted = List.of();
    private final List<Fault> faults = new CopyOnWriteArrayList<>();
    private final AtomicInteger failed = new AtomicInteger();
    private volatile java.util.Optional<UnreliableApi> unreliable = java.util.Optional.empty();
    private final java.util.Set<ExpirableWatch> openWatches = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final AtomicInteger watchesOpened = new AtomicInteger();
    /** Enough for the soak's churn; a watch from before the oldest kept deletion is expired instead. */
    private final DeletionHistory deletions = new DeletionHistory(20_000);

    private final List<LateAnswer> lateAnswers = new CopyOnWriteArrayList<>();

    /** Requests with this method on this object's path (the query aside) are answered with this status, and not acted on. */
    private record Fault(String method, String path, int code) {
        boolean matches(RecordedRequest request) {
            return onPath(request, method, path);
        }
    }

    /** Requests with this method on this path (the query aside) are acted on at once and answered this late. */
    private record LateAnswer(String method, String path, java.time.Duration late) {
        boolean matches(RecordedRequest request) {
            return onPath(request, method, path);
        }
    }

    private static boolean onPath(RecordedRequest request, String method, String path) {
        return method.equals(request.getMethod())
                && path.equals(request.getPath().replaceFirst("\\?.*$", ""));
    }

    private volatile java.util.Optional<VersionInfo> version = java.util.Optional.of(new VersionInfo.Builder()
            .withMajor("1")
            .withMinor("33")
            .withGitVersion("v1.33.1")
            .build());
    private final java.util.concurrent.atomic.AtomicInteger versionAnswers =
            new java.util.concurrent.atomic.AtomicInteger();

    /** @param plural the resource's plural; its status subresource is not checked, as with a real CRD */
    public AdmittingDispatcher(CrdAdmission admission, String group, String plural) {
        this(admission, group, plural, java.util.Optional.empty());
    }

    /** @param scale the resource's scale subresource, served at .../NAME/scale as the API server serves it */
    public AdmittingDispatcher(
            CrdAdmission admission, String group, String plural, java.util.Optional<ScaleSubresource> scale) {
        this.admission = admission;
        this.guarded = Pattern.compile("^/apis/" + Pattern.quote(group) + "/[^/]+/namespaces/[^/]+/"
                + Pattern.quote(plural) + "(/[^/?]+)?(\\?.*)?$");
        this.scalePath = Pattern.compile("^(/apis/" + Pattern.quote(group) + "/[^/]+/namespaces/[^/]+/"
                + Pattern.quote(plural) + "/([^/?]+))/scale(\\?.*)?$");
        this.scale = scale;
        this.resource = plural + "." + group;
    }

    /** What the caller may do, as its RBAC would grant it: a rules review reports exactly these. */
    public void grant(List<PolicyRule> rules) {
        granted = rules.stream()
                .map(rule -> new ResourceRuleBuilder()
                        .withApiGroups(rule.getApiGroups())
                        .withResources(rule.getResources())
                        .withVerbs(rule.getVerbs())
                        .withResourceNames(rule.getResourceNames())
                        .build())
                .toList();
    }

    /**
     * From now until {@link #lift}, every request with this method on this path fails with this status (a 5xx or 429,
     * which clients may retry by themselves) and changes nothing.
     */
    public void fail(String method, String path, int code) {
        faults.add(new Fault(method, path, code));
    }

    /**
     * From now until {@link #lift}, every request with this method on this path takes effect on arrival and is answered
     * this late, as by an API server slow to answer: its caller waits that long for the answer.
     */
    public void answerLate(String method, String path, java.time.Duration late) {
        lateAnswers.add(new LateAnswer(method, path, late));
    }

    public void lift() {
        faults.clear();
        lateAnswers.clear();
    }

    /** From now until {@link #reliable}, the caller this names is answered late and has a share of its writes refused. */
    public void unreliable(UnreliableApi treatment) {
        unreliable = java.util.Optional.of(treatment);
    }

    public void reliable() {
        unreliable = java.util.Optional.empty();
    }

    /**
     * Ends every open watch as an API server ends one it can no longer serve from its watch cache: an ERROR event
     * with a 410 Expired status (k8s.io/apiserver pkg/storage/cacher/cacher.go and apimachinery's
     * NewResourceExpired, v0.33.1), then the close. A client must list again before it watches, which is what
     * fabric8's informers do on a 410 (Reflector, kubernetes-client 7.5.2).
     *
     * @return how many watches were ended
     */
    public int expireWatches() {
        return endEveryWatch(true);
    }

    /**
     * Ends every open watch without an error, as an API server shutting down or a proxy's idle timeout does: the
     * client opens it again from the last resourceVersion it saw, without listing.
     *
     * @return how many watches were ended
     */
    public int dropWatches() {
        return endEveryWatch(false);
    }

    private int endEveryWatch(boolean expired) {
        int ended = 0;
        for (ExpirableWatch watch : List.copyOf(openWatches)) {
            if (watch.end(expired)) {
                ended++;
            }
        }
        return ended;
    }

    /** How many watches were opened so far; a client that re-watches after an expiry opens one more. */
    public int watchesOpened() {
        return watchesOpened.get();
    }

    /** How many requests a fault has answered so far. */
    public int failed() {
        return failed.get();
    }

    @Override
    public MockResponse handleCreate(RecordedRequest request) {
        if (request.getPath().startsWith(RULES_REVIEWS)) {
            return rulesReview(request);
        }
        return guard(request, null).orElseGet(() -> super.handleCreate(request));
    }

    @Override
    public MockResponse handleUpdate(RecordedRequest request) {
        return guard(request, null).orElseGet(() -> {
            byte[] body = request.getBody().getBytes();
            // checked and written in one step, as the API server's storage compares and swaps
            synchronized (this) {
                return staleStatusWrite(request, body)
                        .orElseGet(() -> answeringWithTheObject(request, body, null, super.handleUpdate(request)));
            }
        });
    }

    /**
     * The store writes a PUT to a status subresource over whatever is stored, ignoring the resourceVersion it carries;
     * an API server refuses it with 409 when that version is not the stored one (k8s.io/apiserver v0.37.2,
     * pkg/registry/generic/registry/store.go, Update), for the status as for the whole object.
     */
    private java.util.Optional<MockResponse> staleStatusWrite(RecordedRequest request, byte[] body) {
        String path = request.getPath().replaceFirst("\\?.*$", "");
        if (!path.endsWith("/status")) {
            return java.util.Optional.empty();
        }
        try {
            String version =
                    JSON.readTree(body).path("metadata").path("resourceVersion").asText("");
            JsonNode stored = current(path.substring(0, path.length() - "/status".length()));
            String storedVersion = stored == null
                    ? ""
                    : stored.path("metadata").path("resourceVersion").asText("");
            if (version.isEmpty() || stored == null || version.equals(storedVersion)) {
                return java.util.Optional.empty();
            }
            return java.util.Optional.of(
                    status(
                            409,
                            "Conflict",
                            "Operation cannot be fulfilled on "
                                    + stored.path("kind").asText().toLowerCase(java.util.Locale.ROOT) + " \""
                                    + stored.path("metadata").path("name").asText()
                                    + "\": the object has been modified; please apply your changes to the latest version and try again"));
        } catch (Exception e) {
            return java.util.Optional.empty();
        }
    }

    @Override
    public MockResponse handlePatch(RecordedRequest request) {
        RecordedRequest patch = applyAsMerge(request);
        return guard(patch, patch).orElseGet(() -> {
            byte[] body = patch.getBody().getBytes();
            JsonNode before = currentOrNull(patch.getPath());
            MockResponse patched;
            try {
                patched = super.handlePatch(patch);
            } catch (io.fabric8.zjsonpatch.JsonPatchException e) {
                return unappliablePatch(e);
            }
            return answeringWithTheObject(patch, body, before, patched);
        });
    }

    /**
     * The store answers a write that removed the last finalizer of a deleted object with 202 and no body, having
     * deleted it;
     * an API server answers with the object as written, and clients (the operator SDK's finalizer removal among them)
     * read that answer.
     */
    private static MockResponse answeringWithTheObject(
            RecordedRequest request, byte[] requestBody, JsonNode before, MockResponse response) {
        if (response.code() / 100 != 2
                || (response.getBody() != null && response.getBody().size() > 0)) {
            return response;
        }
        try {
            JsonNode body = JSON.readTree(requestBody);
            JsonNode written = before == null ? body : patched(before, body, request);
            return written == null ? response : response.setResponseCode(200).setBody(JSON.writeValueAsString(written));
        } catch (Exception e) {
            return response;
        }
    }

    private JsonNode currentOrNull(String path) {
        try {
            return current(path);
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * Server-side apply, approximated by a merge of the applied fields: right for a single field manager, which is
     * all a packaged operator (SSA on, as in production) talking to this server amounts to.
     */
    private static RecordedRequest applyAsMerge(RecordedRequest request) {
        if (!String.valueOf(request.getHeader("Content-Type")).contains("apply-patch")) {
            return request;
        }
        Headers headers = request.getHeaders()
                .newBuilder()
                .set("Content-Type", "application/merge-patch+json")
                .build();
        return new RecordedRequest(
                request.getRequestLine(),
                request.method(),
                request.getPath(),
                headers,
                new Buffer(request.getBody().getBytes()));
    }

    /** What GET /version answers, as an API server reports its release; empty makes it answer 503, as one starting up. */
    public void version(java.util.Optional<VersionInfo> answer) {
        version = answer;
    }

    /** How many times GET /version was answered, successfully or not. */
    public int versionAnswers() {
        return versionAnswers.get();
    }

    /** Every write goes through here; a deletion is remembered for the watches opened from before it. */
    @Override
    public void processEvent(
            String path,
            io.fabric8.mockwebserver.crud.AttributeSet pathAttributes,
            io.fabric8.mockwebserver.crud.AttributeSet oldAttributes,
            io.fabric8.kubernetes.api.model.GenericKubernetesResource resource,
            String newState) {
        String deleted = newState == null && oldAttributes != null ? map.get(oldAttributes) : null;
        synchronized (deletions) {
            super.processEvent(path, pathAttributes, oldAttributes, resource, newState);
            if (deleted != null) {
                deletions.deleted(identity(deleted), requestResourceVersion(), oldAttributes, deleted);
            } else if (newState != null) {
                deletions.written(resource != null ? identity(resource) : identity(newState));
            }
        }
    }

    private static String identity(io.fabric8.kubernetes.api.model.GenericKubernetesResource resource) {
        return resource.getApiVersion() + "/" + resource.getKind() + "/"
                + resource.getMetadata().getNamespace() + "/"
                + resource.getMetadata().getName();
    }

    private static String identity(String object) {
        return identity(
                Serialization.unmarshal(object, io.fabric8.kubernetes.api.model.GenericKubernetesResource.class));
    }

    @Override
    public MockResponse handleWatch(String path) {
        MockResponse upgrade = super.handleWatch(path);
        io.fabric8.mockwebserver.http.WebSocketListener store = upgrade.getWebSocketListener();
        return store == null
                ? upgrade
                : upgrade.withWebSocketUpgrade(new ExpirableWatch(store, resumedFrom(path), watchQuery(path)));
    }

    /** The resourceVersion a watch starts after, when it names one (a client resuming, or watching after its list). */
    private static java.util.OptionalLong resumedFrom(String path) {
        return queryParameter(path, "resourceVersion")
                .filter(v -> v.matches("[1-9][0-9]{0,18}"))
                .map(v -> java.util.OptionalLong.of(Long.parseLong(v)))
                .orElse(java.util.OptionalLong.empty());
    }

    /** What the store's own watch matches objects with: the path's attributes, and the name a field selector asks for. */
    private io.fabric8.mockwebserver.crud.AttributeSet watchQuery(String path) {
        io.fabric8.mockwebserver.crud.AttributeSet query = attributeExtractor.fromPath(path);
        java.util.Optional<String> name = queryParameter(path, "fieldSelector")
                .filter(f -> f.startsWith("metadata.name="))
                .map(f -> f.substring("metadata.name=".length()));
        return name.map(n -> query.add(new io.fabric8.mockwebserver.crud.Attribute("name", n)))
                .orElse(query);
    }

    private static java.util.Optional<String> queryParameter(String path, String name) {
        int question = path.indexOf('?');
        if (question < 0) {
            return java.util.Optional.empty();
        }
        for (String pair : path.substring(question + 1).split("&")) {
            int equals = pair.indexOf('=');
            if (equals > 0 && pair.substring(0, equals).equals(name)) {
                return java.util.Optional.of(java.net.URLDecoder.decode(
                        pair.substring(equals + 1), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        return java.util.Optional.empty();
    }

    /** The store's own watch, passed every callback, with the socket kept so that the watch can be expired. */
    private final class ExpirableWatch extends io.fabric8.mockwebserver.http.WebSocketListener {
        private static final String EXPIRED = Serialization.asJson(java.util.Map.of(
                "type",
                "ERROR",
                "object",
                new StatusBuilder()
                        .withStatus("Failure")
                        .withReason("Expired")
                        .withCode(410)
                        .withMessage("too old resource version")
                        .build()));
        private final io.fabric8.mockwebserver.http.WebSocketListener store;
        private final java.util.OptionalLong resumedFrom;
        private final io.fabric8.mockwebserver.crud.AttributeSet query;
        private volatile io.fabric8.mockwebserver.http.WebSocket socket;

        ExpirableWatch(
                io.fabric8.mockwebserver.http.WebSocketListener store,
                java.util.OptionalLong resumedFrom,
                io.fabric8.mockwebserver.crud.AttributeSet query) {
            this.store = store;
            this.resumedFrom = resumedFrom;
            this.query = query;
        }

        /** Closes the watch, after a 410 Expired event when it expired rather than dropped. */
        boolean end(boolean expired) {
            io.fabric8.mockwebserver.http.WebSocket open = socket;
            if (open == null || !openWatches.remove(this)) {
                return false;
            }
            if (expired) {
                open.send(EXPIRED);
            }
            open.close(1000, "");
            return true;
        }

        @Override
        public void onOpen(
                io.fabric8.mockwebserver.http.WebSocket webSocket, io.fabric8.mockwebserver.http.Response response) {
            socket = webSocket;
            watchesOpened.incrementAndGet();
            if (resumedFrom.isPresent()) {
                java.util.concurrent.atomic.AtomicBoolean expired = new java.util.concurrent.atomic.AtomicBoolean();
                // the deletions since its version first, then the store's ADDED of all it holds, as the real one
                // replays
                deletions.replay(
                        resumedFrom.getAsLong(),
                        query,
                        missed -> missed.ifPresentOrElse(
                                events -> events.forEach(webSocket::send), () -> expired.set(true)));
                if (expired.get()) {
                    webSocket.send(EXPIRED);
                    webSocket.close(1000, "");
                    return;
                }
            }
            openWatches.add(this);
            store.onOpen(webSocket, response);
        }

        @Override
        public void onMessage(io.fabric8.mockwebserver.http.WebSocket webSocket, String text) {
            store.onMessage(webSocket, text);
        }

        @Override
        public void onMessage(io.fabric8.mockwebserver.http.WebSocket webSocket, byte[] bytes) {
            store.onMessage(webSocket, bytes);
        }

        @Override
        public void onClosing(io.fabric8.mockwebserver.http.WebSocket webSocket, int code, String reason) {
            openWatches.remove(this);
            store.onClosing(webSocket, code, reason);
        }

        @Override
        public void onClosed(io.fabric8.mockwebserver.http.WebSocket webSocket, int code, String reason) {
            openWatches.remove(this);
            store.onClosed(webSocket, code, reason);
        }

        @Override
        public void onFailure(
                io.fabric8.mockwebserver.http.WebSocket webSocket,
                Throwable t,
                io.fabric8.mockwebserver.http.Response response) {
            openWatches.remove(this);
            store.onFailure(webSocket, t, response);
        }
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        java.util.Optional<UnreliableApi> treatment = unreliable.filter(u -> u.concerns(request));
        if (treatment.isPresent()) {
            java.time.Duration late = treatment.get().delay();
            java.util.Optional<io.fabric8.kubernetes.api.model.Status> refusal =
                    treatment.get().refusal(request);
            MockResponse answer = refusal.map(status -> {
                        failed.incrementAndGet();
                        return new MockResponse()
                                .setResponseCode(status.getCode())
                                .setBody(Serialization.asJson(status));
                    })
                    .orElseGet(() -> dispatchReliably(request));
            // the server schedules a delayed body on a timer, which refuses a delay under a millisecond
            return answer.getWebSocketListener() == null && late.toMillis() > 0 ? answer.setBodyDelay(late) : answer;
        }
        MockResponse answer = dispatchReliably(request);
        return lateAnswers.stream()
                .filter(l -> l.matches(request))
                .findFirst()
                .map(l -> answer.setBodyDelay(l.late()))
                .orElse(answer);
    }

    private MockResponse dispatchReliably(RecordedRequest request) {
        java.util.Optional<Fault> fault =
                faults.stream().filter(f -> f.matches(request)).findFirst();
        if (fault.isPresent()) {
            failed.incrementAndGet();
            // reasons and messages as k8s.io/apimachinery's pkg/api/errors/errors.go (NewGenericServerResponse) words
            // them
            boolean tooMany = fault.get().code() == 429;
            var status = new StatusBuilder()
                    .withStatus("Failure")
                    .withReason(tooMany ? "TooManyRequests" : "ServiceUnavailable")
                    .withCode(fault.get().code())
                    .withMessage(
                            tooMany
                                    ? "the server has received too many requests and has asked us to try again later"
                                    : "the server is currently unable to handle the request")
                    .build();
            return new MockResponse().setResponseCode(fault.get().code()).setBody(Serialization.asJson(status));
        }
        if ("GET".equals(request.getMethod()) && "/version".equals(request.getPath())) {
            versionAnswers.incrementAndGet();
            return version.map(v -> new MockResponse().setResponseCode(200).setBody(Serialization.asJson(v)))
                    .orElseGet(() -> new MockResponse()
                            .setResponseCode(503)
                            .setBody(Serialization.asJson(new StatusBuilder()
                                    .withStatus("Failure")
                                    .withReason("ServiceUnavailable")
                                    .withCode(503)
                                    .build())));
        }
        if ("POST".equals(request.getMethod())
                && EVICTION.matcher(request.getPath()).matches()) {
            return evict(request);
        }
        java.util.regex.Matcher scaled = scalePath.matcher(request.getPath());
        if (scale.isPresent() && scaled.matches()) {
            return scale(request, scale.get(), scaled.group(1), scaled.group(2));
        }
        if ("DELETE".equals(request.getMethod())) {
            java.util.Optional<MockResponse> refused = uidPreconditionFails(request);
            if (refused.isPresent()) {
                return refused.get();
            }
            if (POD.matcher(request.getPath()).matches()) {
                recordDeletionGrace(request);
            }
        }
        return super.dispatch(request);
    }

    /**
     * The grace a Pod's deletion gives it, on the Pod as metadata.deletionGracePeriodSeconds, as the API server writes it
     * (pkg/registry/core/pod/strategy.go CheckGracefulDelete and the apiserver's rest.BeforeDelete): the delete's own
     * gracePeriodSeconds when it has one, the Pod's terminationGracePeriodSeconds otherwise, and a later delete may only
     * shorten it. The kubelet then kills by that grace, whatever the spec says.
     */
    private void recordDeletionGrace(RecordedRequest request) {
        try {
            JsonNode pod = current(request.getPath());
            if (pod == null || pod.path("metadata").path("finalizers").isEmpty()) {
                return;
            }
            byte[] body = request.getBody().getBytes();
            JsonNode asked =
                    (body.length == 0 ? JSON.createObjectNode() : JSON.readTree(body)).path("gracePeriodSeconds");
            long grace = asked.isNumber()
                    ? asked.asLong()
                    : pod.path("spec").path("terminationGracePeriodSeconds").asLong(DEFAULT_GRACE_SECONDS);
            JsonNode before = pod.path("metadata").path("deletionGracePeriodSeconds");
            if (before.isNumber() && before.asLong() <= grace) {
                return;
            }
            String patch = "{\"metadata\":{\"deletionGracePeriodSeconds\":" + grace + "}}";
            String itemPath = request.getPath().replaceFirst("\\?.*$", "");
            super.handlePatch(new RecordedRequest(
                    "PATCH " + itemPath + " HTTP/1.1",
                    HttpMethod.PATCH,
                    itemPath,
                    Headers.builder()
                            .add("Content-Type", "application/merge-patch+json")
                            .build(),
                    new Buffer(patch.getBytes(java.nio.charset.StandardCharsets.UTF_8))));
        } catch (Exception e) {
            throw new IllegalStateException("could not record the deletion grace of " + request.getPath(), e);
        }
    }

    /**
     * The scale subresource, as the API server serves a CRD's (apiextensions-apiserver
     * pkg/registry/customresource/etcd.go, ScaleREST): a read maps the object onto an autoscaling/v1 Scale and fails
     * with 500 while the object has no count at the spec replicas path; a PUT or a patch (applied to the object's
     * Scale) writes the Scale's spec.replicas at that path alone, refuses a resourceVersion other than the object's with
     * 409, and goes through the same update, and so the same admission, as a write of the whole object.
     */
    private MockResponse scale(RecordedRequest request, ScaleSubresource subresource, String objectPath, String name) {
        try {
            JsonNode current = currentOrNull(objectPath);
            if (current == null) {
                return status(404, "NotFound", resource + " \"" + name + "\" not found");
            }
            String method = request.getMethod();
            if ("GET".equals(method)) {
                return subresource.hasSpecReplicas(current)
                        ? new MockResponse()
                                .setResponseCode(200)
                                .setBody(JSON.writeValueAsString(subresource.scaleOf(current)))
                        : status(
                                500,
                                "InternalError",
                                "Internal error occurred: the spec replicas field \"" + subresource.specReplicasPath()
                                        + "\" does not exist");
            }
            JsonNode asked;
            if ("PUT".equals(method)) {
                asked = JSON.readTree(request.getBody().getBytes());
            } else if ("PATCH".equals(method)) {
                asked = patched(
                        subresource.scaleOf(current),
                        JSON.readTree(request.getBody().getBytes()),
                        request);
            } else {
                return status(
                        405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
            }
            // a Go client decodes a Scale without spec.replicas as 0; only a patch leaves the sentinel that says
            // "empty"
            if ("PATCH".equals(method) && !asked.path("spec").path("replicas").isIntegralNumber()) {
                return status(
                        400,
                        "BadRequest",
                        "the spec replicas field \"" + subresource.specReplicasPath() + "\" cannot be empty");
            }
            String version = asked.path("metadata").path("resourceVersion").asText("");
            String currentVersion =
                    current.path("metadata").path("resourceVersion").asText("");
            if (!version.isEmpty() && !version.equals(currentVersion)) {
                return status(
                        409,
                        "Conflict",
                        "Operation cannot be fulfilled on " + resource + " \"" + name
                                + "\": the object has been modified; please apply your changes to the latest version and try again");
            }
            ObjectNode updated = subresource.applied(
                    current, asked.path("spec").path("replicas").asInt(0));
            MockResponse written = handleUpdate(new RecordedRequest(
                    "PUT " + objectPath + " HTTP/1.1",
                    HttpMethod.PUT,
                    objectPath,
                    Headers.builder().add("Content-Type", "application/json").build(),
                    new Buffer(JSON.writeValueAsBytes(updated))));
            if (written.code() / 100 != 2) {
                return written;
            }
            JsonNode stored = currentOrNull(objectPath);
            return new MockResponse()
                    .setResponseCode(200)
                    .setBody(JSON.writeValueAsString(subresource.scaleOf(stored == null ? updated : stored)));
        } catch (Exception e) {
            return status(400, "BadRequest", "unreadable Scale: " + e);
        }
    }

    /**
     * The store lets a JSON patch that does not apply escape, and never answers; an API server answers 422 (seen on
     * kube-apiserver v1.37.2; k8s.io/apiserver pkg/endpoints/handlers/patch.go, applyJSPatch).
     */
    private static MockResponse unappliablePatch(Exception e) {
        return status(
                422, "Invalid", "the server rejected our request due to an error in our request: " + e.getMessage());
    }

    private static MockResponse status(int code, String reason, String message) {
        return new MockResponse()
                .setResponseCode(code)
                .setBody(Serialization.asJson(new StatusBuilder()
                        .withStatus("Failure")
                        .withReason(reason)
                        .withCode(code)
                        .withMessage(message)
                        .build()));
    }

    /** An eviction deletes the Pod with the eviction's own delete options, as the API server's eviction subresource does. */
    private MockResponse evict(RecordedRequest request) {
        try {
            JsonNode options = JSON.readTree(request.getBody().getBytes()).path("deleteOptions");
            String podPath = request.getPath().replaceFirst("/eviction$", "");
            byte[] body = options.isMissingNode() ? new byte[0] : JSON.writeValueAsBytes(options);
            MockResponse deleted = dispatch(new RecordedRequest(
                    "DELETE " + podPath + " HTTP/1.1",
                    HttpMethod.DELETE,
                    podPath,
                    Headers.builder().add("Content-Type", "application/json").build(),
                    new Buffer(body)));
            if (deleted.code() / 100 != 2) {
                return deleted;
            }
            return new MockResponse()
                    .setResponseCode(201)
                    .setBody(Serialization.asJson(new StatusBuilder()
                            .withStatus("Success")
                            .withCode(201)
                            .build()));
        } catch (Exception e) {
            var status = new StatusBuilder()
                    .withStatus("Failure")
                    .withReason("BadRequest")
                    .withCode(400)
                    .withMessage("unreadable eviction: " + e)
                    .build();
            return new MockResponse().setResponseCode(400).setBody(Serialization.asJson(status));
        }
    }

    private MockResponse rulesReview(RecordedRequest request) {
        SelfSubjectRulesReview review =
                Serialization.unmarshal(request.getBody().readUtf8(), SelfSubjectRulesReview.class);
        review.setStatus(new SubjectRulesReviewStatusBuilder()
                .withResourceRules(granted)
                .withIncomplete(false)
                .build());
        return new MockResponse().setResponseCode(201).setBody(Serialization.asJson(review));
    }

    private java.util.Optional<MockResponse> uidPreconditionFails(RecordedRequest request) {
        try {
            byte[] body = request.getBody().getBytes();
            JsonNode options = body.length == 0 ? JSON.createObjectNode() : JSON.readTree(body);
            JsonNode uid = options.path("preconditions").path("uid");
            if (uid.isTextual()) {
                JsonNode existing = current(request.getPath());
                if (existing != null
                        && !uid.asText()
                                .equals(existing.path("metadata").path("uid").asText())) {
                    var status = new StatusBuilder()
                            .withStatus("Failure")
                            .withReason("Conflict")
                            .withCode(409)
                            .withMessage("Precondition failed: UID in precondition: " + uid.asText()
                                    + ", UID in object meta: "
                                    + existing.path("metadata").path("uid").asText())
                            .build();
                    return java.util.Optional.of(
                            new MockResponse().setResponseCode(409).setBody(Serialization.asJson(status)));
                }
            }
            return java.util.Optional.empty();
        } catch (Exception e) {
            var status = new StatusBuilder()
                    .withStatus("Failure")
                    .withReason("BadRequest")
                    .withCode(400)
                    .withMessage("unreadable delete options: " + e)
                    .build();
            return java.util.Optional.of(new MockResponse().setResponseCode(400).setBody(Serialization.asJson(status)));
        }
    }

    private java.util.Optional<MockResponse> guard(RecordedRequest request, RecordedRequest patch) {
        if (!guarded.matcher(request.getPath()).matches()) {
            return java.util.Optional.empty();
        }
        try {
            JsonNode old = current(request.getPath());
            // getBytes leaves the body in place for the store behind us; reading it would consume it
            byte[] body = request.getBody().getBytes();
            JsonNode object;
            try {
                object = patch == null ? JSON.readTree(body) : patched(old, JSON.readTree(body), request);
            } catch (io.fabric8.zjsonpatch.JsonPatchException e) {
                return java.util.Optional.of(unappliablePatch(e));
            }
            if (object == null) {
                return java.util.Optional.empty();
            }
            List<String> violations = admission.violations(object, old);
            if (violations.isEmpty()) {
                return java.util.Optional.empty();
            }
            String name = object.path("metadata").path("name").asText();
            var status = new StatusBuilder()
                    .withStatus("Failure")
                    .withReason("Invalid")
                    .withCode(422)
                    .withMessage(admission.refusal(name, violations))
                    .build();
            return java.util.Optional.of(new MockResponse().setResponseCode(422).setBody(Serialization.asJson(status)));
        } catch (Exception e) {
            // a broken admission must fail the request loudly, never let an unchecked object through
            var status = new StatusBuilder()
                    .withStatus("Failure")
                    .withReason("InternalError")
                    .withCode(500)
                    .withMessage("admission failed: " + e)
                    .build();
            return java.util.Optional.of(new MockResponse().setResponseCode(500).setBody(Serialization.asJson(status)));
        }
    }

    private JsonNode current(String path) throws Exception {
        String itemPath = path.replaceFirst("\\?.*$", "");
        MockResponse existing = handleGet(itemPath);
        String body = existing == null || existing.getBody() == null
                ? null
                : existing.getBody().readUtf8();
        if (body == null || body.isEmpty()) {
            return null;
        }
        JsonNode node = JSON.readTree(body);
        return node.path("kind").asText().equals("Status") || node.has("items") ? null : node;
    }

    private static JsonNode patched(JsonNode old, JsonNode patch, RecordedRequest request) {
        if (old == null) {
            return null;
        }
        String type = String.valueOf(request.getHeader("Content-Type"));
        if (type.contains("json-patch")) {
            return JsonPatch.apply(patch, old);
        }
        return merge(old.deepCopy(), patch);
    }

    private static JsonNode merge(JsonNode target, JsonNode patch) {
        if (!patch.isObject() || !target.isObject()) {
            return patch;
        }
        ObjectNode out = (ObjectNode) target;
        patch.fields().forEachRemaining(e -> {
            if (e.getValue().isNull()) {
                out.remove(e.getKey());
            } else {
                out.set(
                        e.getKey(),
                        merge(
                                out.path(e.getKey()).isMissingNode() ? JSON.createObjectNode() : out.get(e.getKey()),
                                e.getValue()));
            }
        });
        return out;
    }
}
