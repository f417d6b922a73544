package dev.ebb.operator.observe;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.UUID;
import org.jboss.logging.Logger;

/** Writes Kubernetes Events on a ModelDeployment so that `kubectl describe` tells what the operator did and why. */
@ApplicationScoped
public class EventRecorder {
    public static final String COMPONENT = "ebb-operator";
    static final int MAX_MESSAGE = 1024;
    private static final Logger LOG = Logger.getLogger(EventRecorder.class);

    private final KubernetesClient client;

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
        var event = new EventBuilder()
                .withNewMetadata()
                    .withName(subject.getMetadata().getName() + "." + UUID.randomUUID().toString().replace("-", "").substring(0, 16))
                    .withNamespace(namespace)
                .endMetadata()
                .withInvolvedObject(new ObjectReferenceBuilder()
                        .withApiVersion(subject.getApiVersion())
                        .withKind(subject.getKind())
                        .withName(subject.getMetadata().getName())
                        .withNamespace(namespace)
                        .withUid(subject.getMetadata().getUid())
                        .build())
                .withType(type)
                .withReason(reason)
                .withMessage(truncate(message))
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .withNewSource().withComponent(COMPONENT).endSource()
                .withReportingComponent(COMPONENT)
                .build();
        try {
            client.v1().events().inNamespace(namespace).resource(event).create();
        } catch (KubernetesClientException e) {
            // An Event is a courtesy: failing to write one must not fail the reconciliation that caused it.
            LOG.warnf("could not record event %s on %s/%s: %s", reason, namespace, subject.getMetadata().getName(), e.getMessage());
        }
    }

    static String truncate(String message) {
        return message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 1) + "…";
    }
}
