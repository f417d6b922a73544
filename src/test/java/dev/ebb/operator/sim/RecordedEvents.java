package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Collections;
import java.util.List;

/**
 * The Events of a namespace as occurrences: a recorder folds repeats of the same Event into its count, so an
 * assertion on how often something was told counts each Event as many times as it says it happened.
 */
public final class RecordedEvents {
    private RecordedEvents() {}

    public static List<Event> occurrences(KubernetesClient client, String namespace) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .flatMap(e -> Collections.nCopies(e.getCount() == null ? 1 : e.getCount(), e).stream())
                .toList();
    }
}
