package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A container's ConfigMap volumes as the kubelet's configmap volume plugin gives them: each key of the ConfigMap a
 * file under the mount path, read when the hook runs. Here a mount path lives in a directory of this machine, and a
 * hook's argument under a mount path names the file there. A ConfigMap that is missing mounts as an empty
 * directory, where the kubelet would hold the Pod's start: the hook then finds no file, as a deleted key leaves it.
 */
final class ConfigMapMounts implements AutoCloseable {
    private final Map<String, Path> mounted;
    private final List<Path> made;

    private ConfigMapMounts(Map<String, Path> mounted, List<Path> made) {
        this.mounted = mounted;
        this.made = made;
    }

    static ConfigMapMounts of(KubernetesClient client, Pod pod, Container container) throws IOException {
        Map<String, String> configMapOfVolume = new LinkedHashMap<>();
        for (Volume volume : Optional.ofNullable(pod.getSpec().getVolumes()).orElse(List.of())) {
            if (volume.getConfigMap() != null) {
                configMapOfVolume.put(volume.getName(), volume.getConfigMap().getName());
            }
        }
        Map<String, Path> mounted = new LinkedHashMap<>();
        List<Path> made = new ArrayList<>();
        for (VolumeMount mount :
                Optional.ofNullable(container.getVolumeMounts()).orElse(List.of())) {
            String configMap = configMapOfVolume.get(mount.getName());
            if (configMap == null) {
                continue;
            }
            Path dir = Files.createTempDirectory("ebb-configmap-");
            made.add(dir);
            ConfigMap data = client.configMaps()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(configMap)
                    .get();
            for (Map.Entry<String, String> file : Optional.ofNullable(data)
                    .map(ConfigMap::getData)
                    .orElse(Map.of())
                    .entrySet()) {
                Files.writeString(dir.resolve(file.getKey()), file.getValue());
            }
            mounted.put(mount.getMountPath().replaceAll("/+$", ""), dir);
        }
        return new ConfigMapMounts(mounted, made);
    }

    /** The argv with every argument under a mount path naming the file where that mount lives here. */
    List<String> onHost(List<String> argv) {
        return argv.stream()
                .map(arg -> mounted.entrySet().stream()
                        .filter(m -> arg.startsWith(m.getKey() + "/"))
                        .findFirst()
                        .map(m -> m.getValue() + arg.substring(m.getKey().length()))
                        .orElse(arg))
                .toList();
    }

    @Override
    public void close() {
        for (Path dir : made) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder())
                        .forEach(path -> path.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
