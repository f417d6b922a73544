package dev.ebb.operator.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** What the make targets tell a newcomer before anything is built. */
class CommandLineTest {
    private static final Pattern PHONY = Pattern.compile("^\\.PHONY:(.*)$", Pattern.MULTILINE);

    private static Map<String, String> withKubeconfig(String kubeconfig) {
        Map<String, String> env = new HashMap<>();
        env.put("KUBECONFIG", kubeconfig);
        env.put("SANDBOX", null);
        return env;
    }

    @Test
    void helpListsEveryTargetButItsOwnHelpersWithWhatItDoes() throws Exception {
        Matcher phony = PHONY.matcher(Files.readString(Path.of("Makefile")));
        assertThat(phony.find()).isTrue();
        List<String> targets = Arrays.stream(phony.group(1).trim().split("\\s+"))
                .filter(t -> !t.equals("reachable"))
                .toList();

        MakeCommand help = MakeCommand.run(Map.of(), "help");

        assertThat(help.exitCode()).isZero();
        List<String> lines = help.output().lines().toList();
        for (String target : targets) {
            assertThat(lines).as(target).anyMatch(line -> line.matches("  " + Pattern.quote(target) + " +\\S.{10,}"));
        }
    }

    @Test
    void runGoesToTheSandboxAndSaysWhyWithoutAKubeconfig() throws Exception {
        MakeCommand where = MakeCommand.run(withKubeconfig("/nonexistent/kubeconfig"), "where");

        assertThat(where.output().trim()).isEqualTo("sandbox: no kubeconfig at /nonexistent/kubeconfig");
    }

    @Test
    void runGoesToTheSandboxWhenAskedEvenWithACluster() throws Exception {
        Map<String, String> env = withKubeconfig("/nonexistent/kubeconfig");
        env.put("SANDBOX", "1");

        assertThat(MakeCommand.run(env, "where").output().trim()).isEqualTo("sandbox: SANDBOX is set");
    }

    @Test
    void devStopsAtOnceAndSaysWhyWithoutACluster() throws Exception {
        MakeCommand dev = MakeCommand.run(withKubeconfig("/nonexistent/kubeconfig"), "dev");

        assertThat(dev.exitCode()).isEqualTo(2);
        assertThat(dev.output())
                .contains(
                        "'make dev' needs a cluster that answers, e.g. kind: no kubeconfig at /nonexistent/kubeconfig");
    }

    @Test
    void theProjectIsApacheLicensed() throws Exception {
        assertThat(Files.readString(Path.of("LICENSE"))).contains("Apache License", "Version 2.0, January 2004");
        assertThat(Files.readString(Path.of("pom.xml"))).contains("<name>Apache-2.0</name>");
    }
}
