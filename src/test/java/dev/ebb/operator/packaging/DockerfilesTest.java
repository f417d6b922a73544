package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The operator's images run as an unprivileged user (the Deployment's runAsNonRoot needs a numeric one to verify)
 * that cannot change the files it runs from.
 */
class DockerfilesTest {
    private static List<String> instructions(String dockerfile) throws Exception {
        // a line ending in a backslash goes on in the next one
        String joined =
                Files.readString(Path.of("src", "main", "docker", dockerfile)).replaceAll("\\\\\n", " ");
        return joined.lines()
                .map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Dockerfile.jvm", "Dockerfile.native"})
    void theImageRunsAsANumericNonRootUser(String dockerfile) throws Exception {
        List<String> users = instructions(dockerfile).stream()
                .filter(l -> l.startsWith("USER "))
                .toList();

        assertThat(users).isNotEmpty();
        String user = users.get(users.size() - 1).substring("USER ".length()).strip();
        assertThat(user).as("the last USER of " + dockerfile).matches("[0-9]+(:[0-9]+)?");
        assertThat(Integer.parseInt(user.split(":")[0]))
                .as("the last USER of " + dockerfile)
                .isPositive();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Dockerfile.jvm", "Dockerfile.native"})
    void theApplicationFilesStayOwnedByRoot(String dockerfile) throws Exception {
        assertThat(instructions(dockerfile))
                .filteredOn(l -> l.startsWith("COPY ") || l.startsWith("ADD "))
                .isNotEmpty()
                .noneMatch(l -> l.contains("--chown"));
        assertThat(instructions(dockerfile)).noneMatch(l -> l.startsWith("RUN ") && l.contains("chown"));
    }

    /** Each image's build context holds only what its Dockerfile copies: no sources, no build cache, no secrets. */
    @ParameterizedTest
    @ValueSource(strings = {"Dockerfile.jvm", "Dockerfile.native"})
    void theBuildContextIsOnlyWhatTheImageCopies(String dockerfile) throws Exception {
        List<String> ignore = Files.readString(Path.of("src", "main", "docker", dockerfile + ".dockerignore"))
                .lines()
                .map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .toList();
        List<String> copied = instructions(dockerfile).stream()
                .filter(l -> l.startsWith("COPY "))
                .map(l -> l.split("\\s+"))
                .map(words -> words[words.length - 2])
                .toList();

        assertThat(ignore.get(0)).as("everything is left out first").isEqualTo("*");
        assertThat(ignore.subList(1, ignore.size())).allMatch(l -> l.startsWith("!"));
        assertThat(copied).allSatisfy(source -> assertThat(ignore).anyMatch(l -> source.startsWith(l.substring(1))));
        assertThat(ignore.subList(1, ignore.size()))
                .as("nothing let in that no COPY takes")
                .allSatisfy(l -> assertThat(copied).anyMatch(source -> source.startsWith(l.substring(1))));
    }
}
