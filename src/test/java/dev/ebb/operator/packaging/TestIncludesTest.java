package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** A test class whose name the build's test run does not pick up never runs in {@code make test}, and nobody notices. */
class TestIncludesTest {
    private static final Path TESTS = Path.of("src", "test", "java");
    /** What marks a class as holding tests: JUnit's own annotations and jqwik's properties and examples. */
    private static final Pattern TEST_ANNOTATION = Pattern.compile(
            "^\\s*@(Test|ParameterizedTest|RepeatedTest|TestFactory|Property|Example)\\b", Pattern.MULTILINE);

    private static final Pattern INCLUDES = Pattern.compile(
            "<artifactId>maven-surefire-plugin</artifactId>.*?<includes>(.*?)</includes>", Pattern.DOTALL);
    private static final Pattern INCLUDE = Pattern.compile("<include>(.*?)</include>");

    /** The include patterns of surefire's own configuration, which its default test run uses. */
    private static List<String> surefireIncludes() throws Exception {
        Matcher block = INCLUDES.matcher(Files.readString(Path.of("pom.xml")));
        assertThat(block.find()).as("surefire's includes in pom.xml").isTrue();
        return INCLUDE.matcher(block.group(1)).results().map(m -> m.group(1)).toList();
    }

    @Test
    void everyClassHoldingTestsIsPickedUpByTheBuildsTestRun() throws Exception {
        List<String> includes = surefireIncludes();
        List<PathMatcher> matchers = includes.stream()
                .map(glob -> FileSystems.getDefault().getPathMatcher("glob:" + glob))
                .toList();
        List<Path> classes;
        try (Stream<Path> files = Files.walk(TESTS)) {
            classes = files.filter(f -> f.toString().endsWith(".java"))
                    .filter(TestIncludesTest::holdsTests)
                    .map(TESTS::relativize)
                    .toList();
        }

        assertThat(classes).as("classes holding tests").isNotEmpty();
        // a glob's leading **/ needs a directory, so every class is matched as if it lay one directory deeper
        assertThat(classes)
                .allSatisfy(c -> assertThat(matchers)
                        .as(c + " matches one of " + includes)
                        .anyMatch(include -> include.matches(Path.of("root").resolve(c))));
    }

    private static boolean holdsTests(Path file) {
        try {
            return TEST_ANNOTATION.matcher(Files.readString(file)).find();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + file, e);
        }
    }
}
