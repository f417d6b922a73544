package dev.ebb.operator.cluster;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.stream.Collectors;

/** What a namespace of the real cluster holds, in a line per object, for the message of a failed wait. */
final class ClusterState {
    private ClusterState() {}

    static String describe(KubernetesClient admin, String namespace) {
        StringBuilder out = new StringBuilder();
        List<ModelDeployment> deployments;
        try {
            deployments = admin.resources(ModelDeployment.class)
                    .inNamespace(namespace)
                    .list()
                    .getItems();
        } catch (KubernetesClientException noCrd) {
            deployments = List.of();
        }
        for (ModelDeployment md : deployments) {
            out.append("\nmd ")
                    .append(md.getMetadata().getName())
                    .append(" finalizers=")
                    .append(md.getMetadata().getFinalizers())
                    .append(" status=")
                    .append(md.getStatus());
        }
        for (Pod pod : admin.pods().inNamespace(namespace).list().getItems()) {
            out.append("\npod ")
                    .append(pod.getMetadata().getName())
                    .append(" node=")
                    .append(pod.getSpec().getNodeName())
                    .append(" phase=")
                    .append(pod.getStatus().getPhase())
                    .append(" ip=")
                    .append(pod.getStatus().getPodIP())
                    .append(" deleting=")
                    .append(pod.getMetadata().getDeletionTimestamp())
                    .append(" conditions=")
                    .append(pod.getStatus().getConditions().stream()
                            .map(c -> c.getType() + "=" + c.getStatus()
                                    + (c.getMessage() == null ? "" : "(" + c.getMessage() + ")"))
                            .collect(Collectors.joining(",")));
        }
        admin.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .list()
                .getItems()
                .forEach(slice -> out.append("\nslice ")
                        .append(slice.getMetadata().getName())
                        .append(" ports=")
                        .append(slice.getPorts())
                        .append(" endpoints=")
                        .append(slice.getEndpoints()));
        admin.services()
                .inNamespace(namespace)
                .list()
                .getItems()
                .forEach(svc -> out.append("\nservice ")
                        .append(svc.getMetadata().getName())
                        .append(" selector=")
                        .append(svc.getSpec().getSelector())
                        .append(" ports=")
                        .append(svc.getSpec().getPorts()));
        List<Event> events = admin.v1().events().inNamespace(namespace).list().getItems();
        events.subList(Math.max(0, events.size() - 15), events.size())
                .forEach(e -> out.append("\nevent ")
                        .append(e.getInvolvedObject().getName())
                        .append(' ')
                        .append(e.getReason())
                        .append(": ")
                        .append(e.getMessage()));
        return out.toString();
    }
}
