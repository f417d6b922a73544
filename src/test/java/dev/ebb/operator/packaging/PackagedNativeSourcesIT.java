package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentSpec;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.drain.DrainHook;
import dev.ebb.operator.read.ReadCommand;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * What a native executable would be built from (`make native-sources`, which `make test` runs first): the classes
 * Jackson reads and writes reflectively are registered, and the scripts the operator loads at run time are included.
 */
class PackagedNativeSourcesIT {
    private static final Path NATIVE_SOURCES = Path.of("target", "native-sources");
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode config(String name) throws IOException {
        // a failure, not a skip: `make test` writes them first, and a check that is skipped proves nothing
        assertThat(NATIVE_SOURCES)
                .as("run `make native-sources` (or `make test`, which does) first")
                .isDirectory();
        Path runner;
        try (Stream<Path> files = Files.list(NATIVE_SOURCES)) {
            runner = files.filter(f -> f.toString().endsWith("-runner.jar"))
                    .findFirst()
                    .orElseThrow();
        }
        try (ZipFile jar = new ZipFile(runner.toFile())) {
            return JSON.readTree(jar.getInputStream(jar.getEntry("META-INF/native-image/" + name)));
        }
    }

    @Test
    void everyClassOfTheCustomResourceIsRegisteredForReflection() throws Exception {
        Set<String> registered = new LinkedHashSet<>();
        config("reflect-config.json")
                .forEach(entry -> registered.add(entry.path("name").asText()));

        Set<Class<?>> graph = new LinkedHashSet<>(List.of(ModelDeployment.class));
        reachable(ModelDeploymentSpec.class, graph);
        reachable(ModelDeploymentStatus.class, graph);
        assertThat(graph).hasSizeGreaterThan(5);
        assertThat(registered).containsAll(graph.stream().map(Class::getName).toList());
    }

    /** Where the files the operator ships as resources live in the sources. */
    private static final Path SHIPPED = Path.of("src", "main", "resources", "ebb");

    @Test
    void everyFileTheOperatorShipsUnderEbbIsIncluded() throws Exception {
        List<Pattern> included = new ArrayList<>();
        config("resource-config.json")
                .at("/resources/includes")
                .forEach(i -> included.add(Pattern.compile(i.path("pattern").asText())));

        // every file the operator ships under ebb/: the scripts it runs in engine and router Pods, and llm-d's router
        // configuration, read when that layout is first used
        List<String> shipped;
        try (Stream<Path> files = Files.walk(SHIPPED)) {
            shipped = files.filter(Files::isRegularFile)
                    .map(f -> "ebb/" + SHIPPED.relativize(f).toString().replace(File.separatorChar, '/'))
                    .toList();
        }
        assertThat(shipped)
                .contains(DrainHook.RESOURCE, ReadCommand.RESOURCE, "ebb/drain-envoy.sh", "ebb/llm-d/envoy.yaml");
        assertThat(shipped)
                .allMatch(
                        resource -> included.stream()
                                .anyMatch(p -> p.matcher(resource).matches()),
                        "included");
    }

    /** The operator's own types under a record's components, generic arguments included. */
    private static void reachable(Type type, Set<Class<?>> seen) {
        if (type instanceof ParameterizedType generic) {
            for (Type argument : generic.getActualTypeArguments()) {
                reachable(argument, seen);
            }
        } else if (type instanceof Class<?> c && c.getName().startsWith("dev.ebb.") && seen.add(c) && c.isRecord()) {
            for (RecordComponent component : c.getRecordComponents()) {
                reachable(component.getGenericType(), seen);
            }
        }
    }
}
