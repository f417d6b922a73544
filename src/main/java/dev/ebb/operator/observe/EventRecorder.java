package dev.ebb.operator.observe;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * Writes Kubernetes Events on a ModelDeployment so that `kubectl describe` tells what the operator did and why.
 *
 * <p>An Event identical to one written before (same object, type, reason and message) is not written again: the
 * earlier one's count and lastTimestamp move instead, as client-go's recorder does (tools/record/events_cache.go,
 * getEventKey and eventLogger.eventObserve, remembering the last 4096). A cause that persists over many passes is
 * then one line of `kubectl describe`, with how often and until when it was seen.
 */
@ApplicationScoped
public class EventRecorder {
    public static final String COMPONENT = "ebb-operator";
    static final int MAX_MESSAGE = 1024;
    static final int REMEMBERED = 4096;
    private static final Logger LOG = Logger.getLogger(EventRecorder.class);

    private final KubernetesClient client;
    /** The Events written so far, by what makes two of them the same, least recently seen first. */
    private final Map<String, Written> written = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Written> eldest) {
            return size() > REMEMBERED;
        }
    };

    private record Written(String name, int count) {}

    public EventRecorder(KubernetesClient client) {
        this.client = client;
    }

    public void normal(HasMetadata subject, String reason, String message) {
        record(subject, "Normal", reason, message);
    }

    public void warning(HasMetadata subject, String reason, String message) {
        record(subject, "Warning", reason, message);
    }

    private void record(HasMetadata subject, String type, String reason, String message) {
        String now = Instant.now().toString();
        String namespace = subject.getMetadata().getNamespace();
        ObjectReference involved = new ObjectReferenceBuilder()
                .withApiVersion(subject.getApiVersion())
                .withKind(subject.getKind())
                .withName(subject.getMetadata().getName())
                .withNamespace(namespace)
                .withUid(subject.getMetadata().getUid())
                .build();
        String text = truncate(message);
        String key = String.join(
                "\u0000",
                involved.getApiVersion(),
                involved.getKind(),
                namespace,
                involved.getName(),
                String.valueOf(involved.getUid()),
                type,
                reason,
                text);
        try {
            Written before = remembered(key);
            if (before == null || !counted(namespace, before, now)) {
                String name = subject.getMetadata().getName() + "."
                        + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
                client.v1()
                        .events()
                        .inNamespace(namespace)
                        .resource(event(name, involved, type, reason, text, now))
                        .create();
                remember(key, new Written(name, 1));
            } else {
                remember(key, new Written(before.name(), before.count() + 1));
            }
        } catch (KubernetesClientException e) {
            // An Event is a courtesy: failing to write one must not fail the reconciliation that caused it.
            LOG.warnf(
                    "could not record event %s on %s/%s: %s",
                    reason, namespace, subject.getMetadata().getName(), e.getMessage());
        }
    }

    /** Moves an Event written before; false when it is gone (Events expire), so that a new one is written. */
    private boolean counted(String namespace, Written before, String now) {
        try {
            client.v1()
                    .events()
                    .inNamespace(namespace)
                    .withName(before.name())
                    .patch(
                            PatchContext.of(PatchType.JSON_MERGE),
                            client.getKubernetesSerialization()
                                    .asJson(Map.of("count", before.count() + 1, "lastTimestamp", now)));
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return false;
            }
            throw e;
        }
    }

    private static Event event(
            String name, ObjectReference involved, String type, String reason, String message, String now) {
        return new EventBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(involved.getNamespace())
                .endMetadata()
                .withInvolvedObject(involved)
                .withType(type)
                .withReason(reason)
                .withMessage(message)
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .withNewSource()
                .withComponent(COMPONENT)
                .endSource()
                .withReportingComponent(COMPONENT)
                .build();
    }

    private Written remembered(String key) {
        synchronized (written) {
            return written.get(key);
        }
    }

    private void remember(String key, Written event) {
        synchronized (written) {
            written.put(key, event);
        }
    }

    static String truncate(String message) {
        return message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 1) + "…";
    }
}
