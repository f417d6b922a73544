package dev.ebb.operator.packaging;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ebb.operator.sim.SimApiServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * `make bundle`: writes the OLM bundle under bundle/ from what `package` generated and the samples, and removes any
 * file the bundle no longer has (bundle/README.md stays). Run from the project's root.
 */
public final class BundleWriter {
    static final Path BUNDLE = Path.of("bundle");
    static final Path README = BUNDLE.resolve("README.md");
    static final Path SAMPLES = Path.of("src", "main", "kubernetes", "samples");
    static final Path ICON = Path.of("src", "main", "kubernetes", "olm", "icon.svg");

    private BundleWriter() {}

    public static void main(String[] args) throws IOException {
        Map<String, String> files = OlmBundle.render(inputs());
        for (Path stale : checkedIn()) {
            if (!files.containsKey(relative(stale))) {
                Files.delete(stale);
            }
        }
        for (Map.Entry<String, String> file : files.entrySet()) {
            Path path = BUNDLE.resolve(file.getKey());
            Files.createDirectories(path.getParent());
            Files.writeString(path, file.getValue());
        }
        System.out.println(
                "wrote " + files.size() + " files under " + BUNDLE + "/: " + String.join(", ", files.keySet()));
    }

    /** What the bundle is made from, as the last `package` left it. */
    static OlmBundle.Inputs inputs() throws IOException {
        return new OlmBundle.Inputs(
                read(PackagedManifests.MANIFESTS), read(SimApiServer.CRD), samples(), read(ICON), DefaultImages.of());
    }

    /** The sample ModelDeployments, by file name: what OLM shows as the operator's examples. */
    static List<OlmBundle.Source> samples() throws IOException {
        return everySample().stream().filter(BundleWriter::modelDeployment).toList();
    }

    /** The sample ModelDeployments' texts, for a test that applies them elsewhere. */
    public static List<String> sampleDeployments() throws IOException {
        return samples().stream().map(OlmBundle.Source::text).toList();
    }

    /** The samples of other kinds beside them (the autoscalers that drive a sample ModelDeployment), by file name. */
    static List<OlmBundle.Source> autoscalerSamples() throws IOException {
        return everySample().stream().filter(s -> !modelDeployment(s)).toList();
    }

    private static List<OlmBundle.Source> everySample() throws IOException {
        try (Stream<Path> files = Files.list(SAMPLES)) {
            List<Path> yaml =
                    files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
            List<OlmBundle.Source> samples = new ArrayList<>();
            for (Path file : yaml) {
                samples.add(read(file));
            }
            return samples;
        }
    }

    private static boolean modelDeployment(OlmBundle.Source sample) {
        try {
            return "ModelDeployment"
                    .equals(new YAMLMapper()
                            .readTree(sample.text())
                            .path("kind")
                            .asText());
        } catch (IOException e) {
            throw new UncheckedIOException(sample.file() + " is not YAML", e);
        }
    }

    /** The bundle's files now under bundle/, except its README. */
    static List<Path> checkedIn() throws IOException {
        if (!Files.isDirectory(BUNDLE)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(BUNDLE)) {
            return files.filter(Files::isRegularFile)
                    .filter(f -> !f.equals(README))
                    .sorted()
                    .toList();
        }
    }

    static String relative(Path checkedIn) {
        return BUNDLE.relativize(checkedIn).toString().replace('\\', '/');
    }

    private static OlmBundle.Source read(Path file) throws IOException {
        try {
            return new OlmBundle.Source(file.toString(), Files.readString(file));
        } catch (NoSuchFileException e) {
            throw new NoSuchFileException(
                    file + " is missing; `./mvnw package` writes the build's part of the bundle's inputs");
        }
    }
}
