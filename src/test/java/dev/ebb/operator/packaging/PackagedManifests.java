package dev.ebb.operator.packaging;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The manifests `package` writes for installing the operator, as objects. */
public final class PackagedManifests {
    public static final Path MANIFESTS = Path.of("target", "kubernetes", "kubernetes.json");
    /** The operator's ServiceAccount, as src/main/kubernetes/kubernetes.yml names it. */
    public static final String SERVICE_ACCOUNT = "ebb-operator";
    /** The ClusterRole of what the operator does in the namespaces it watches, named as the generator names it. */
    public static final String CLUSTER_ROLE = "ebb-operator";

    private PackagedManifests() {}

    public static List<HasMetadata> read() throws IOException {
        // the build writes a bare JSON array of objects: read it as the List kind it stands for
        String list = "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":" + Files.readString(MANIFESTS) + "}";
        return Serialization.unmarshal(list, KubernetesList.class).getItems();
    }
}
