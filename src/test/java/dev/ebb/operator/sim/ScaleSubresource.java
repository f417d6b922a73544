package dev.ebb.operator.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceSubresourceScale;
import java.util.List;
import java.util.Optional;

/**
 * A custom resource's scale subresource as the API server maps it (apiextensions-apiserver
 * pkg/registry/customresource/etcd.go, scaleFromCustomResource and scaleUpdatedObjectInfo, read in stored copies of
 * kubernetes/kubernetes rather than at a pinned release tag): an autoscaling/v1 Scale read from the three paths the
 * CRD names, and a Scale written back onto its spec replicas path alone. Pure: objects in, objects out.
 */
public final class ScaleSubresource {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final List<String> specReplicas;
    private final List<String> statusReplicas;
    private final Optional<List<String>> labelSelector;
    private final String specReplicasPath;

    private ScaleSubresource(CustomResourceSubresourceScale scale) {
        specReplicasPath = scale.getSpecReplicasPath();
        specReplicas = split(scale.getSpecReplicasPath());
        statusReplicas = split(scale.getStatusReplicasPath());
        labelSelector = Optional.ofNullable(scale.getLabelSelectorPath())
                .filter(p -> !p.isEmpty())
                .map(ScaleSubresource::split);
    }

    /** The scale subresource the CRD's first version declares, if it declares one. */
    public static Optional<ScaleSubresource> of(CustomResourceDefinition crd) {
        var subresources = crd.getSpec().getVersions().get(0).getSubresources();
        return Optional.ofNullable(subresources).map(s -> s.getScale()).map(ScaleSubresource::new);
    }

    public String specReplicasPath() {
        return specReplicasPath;
    }

    /** The Scale of an object; its spec.replicas is left out when the object has none at the spec path. */
    public ObjectNode scaleOf(JsonNode object) {
        ObjectNode scale = JSON.createObjectNode();
        scale.put("apiVersion", "autoscaling/v1");
        scale.put("kind", "Scale");
        ObjectNode metadata = scale.putObject("metadata");
        JsonNode meta = object.path("metadata");
        for (String field : List.of("name", "namespace", "uid", "resourceVersion", "creationTimestamp")) {
            if (meta.hasNonNull(field)) {
                metadata.set(field, meta.get(field));
            }
        }
        ObjectNode spec = scale.putObject("spec");
        at(object, specReplicas).filter(JsonNode::isIntegralNumber).ifPresent(r -> spec.put("replicas", r.asInt()));
        ObjectNode status = scale.putObject("status");
        status.put(
                "replicas",
                at(object, statusReplicas)
                        .filter(JsonNode::isIntegralNumber)
                        .map(JsonNode::asInt)
                        .orElse(0));
        labelSelector
                .flatMap(path -> at(object, path))
                .filter(JsonNode::isTextual)
                .ifPresent(s -> status.put("selector", s.asText()));
        return scale;
    }

    /** Whether the object has a count at the spec path: without one, the API server cannot answer a read of its Scale. */
    public boolean hasSpecReplicas(JsonNode object) {
        return at(object, specReplicas).filter(JsonNode::isIntegralNumber).isPresent();
    }

    /** The object with the Scale's spec.replicas written at the spec path, and nothing else changed. */
    public ObjectNode applied(JsonNode object, int replicas) {
        ObjectNode copy = object.deepCopy();
        ObjectNode node = copy;
        for (String field : specReplicas.subList(0, specReplicas.size() - 1)) {
            JsonNode next = node.path(field);
            node = next.isObject() ? (ObjectNode) next : node.putObject(field);
        }
        node.put(specReplicas.get(specReplicas.size() - 1), replicas);
        return copy;
    }

    private static Optional<JsonNode> at(JsonNode object, List<String> path) {
        JsonNode node = object;
        for (String field : path) {
            node = node.path(field);
        }
        return node.isMissingNode() || node.isNull() ? Optional.empty() : Optional.of(node);
    }

    /** A path as the CRD writes it, ".spec.scaling.replicas": split on its dots, the leading one dropped, as etcd.go does. */
    private static List<String> split(String path) {
        return List.of((path.startsWith(".") ? path.substring(1) : path).split("\\."));
    }
}
