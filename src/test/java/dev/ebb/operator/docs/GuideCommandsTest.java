package dev.ebb.operator.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ebb.operator.docs.GuideCommands.Command;
import dev.ebb.operator.packaging.MakeCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Every command the README and the guides give a reader is run somewhere: a {@code make} target the Makefile has, or a
 * kubectl command that GuideCommandsIT runs on the cluster tier's control plane and checks against what the docs say
 * it shows.
 */
class GuideCommandsTest {
    private static final Pattern TARGET = Pattern.compile("(?m)^([a-z][a-z-]*):");
    private static final Pattern ASSIGNMENT = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*=.*");

    private static Set<String> makeTargets() throws Exception {
        return TARGET.matcher(Files.readString(Path.of("Makefile")))
                .results()
                .map(m -> m.group(1))
                .collect(Collectors.toSet());
    }

    /** Why the command is run nowhere, or empty when it is. */
    private static Optional<String> unrun(Command command, Set<String> targets) {
        if (command.isKubectl()) {
            int checks = GuideCommands.checksOf(command).size();
            return checks == 1
                    ? Optional.empty()
                    : Optional.of(command + ": " + checks + " checks of GuideCommands.CLUSTER_CHECKS cover it, not 1");
        }
        List<String> words = List.of(command.text().split(" "));
        if (!words.get(0).equals("make")) {
            return Optional.of(command + ": neither a make target nor a kubectl command the cluster tier runs");
        }
        List<String> named = words.subList(1, words.size()).stream()
                .filter(w -> !w.startsWith("-") && !ASSIGNMENT.matcher(w).matches())
                .toList();
        return named.size() == 1 && targets.contains(named.get(0))
                ? Optional.empty()
                : Optional.of(command + ": names no single target of the Makefile");
    }

    private static List<String> unrun(List<Command> commands) throws Exception {
        Set<String> targets = makeTargets();
        List<String> unrun = new ArrayList<>();
        commands.forEach(c -> unrun(c, targets).ifPresent(unrun::add));
        return unrun;
    }

    @Test
    void everyCommandOfTheReadmeAndTheGuidesIsAMakeTargetOrRunOnTheClusterTier() throws Exception {
        List<Command> commands = GuideCommands.all();

        assertThat(commands).extracting(Command::text).contains("make run", "make deploy");
        assertThat(unrun(commands)).isEmpty();
        assertThat(GuideCommands.CLUSTER_CHECKS)
                .as("checks that no command of the docs needs any more")
                .allSatisfy(check -> assertThat(commands).anyMatch(check::covers));
    }

    @Test
    void aCommandAddedToAGuideThatNothingRunsFailsTheCheck() throws Exception {
        String page = """
                # A guide

                ```sh
                make bundle                       # the bundle
                kubectl describe md qwen          # conditions, then the latest Events
                helm install ebb ./chart \\
                  --namespace ebb-system          # not run anywhere
                kubectl get pods -A
                make publish
                ```

                ```console
                $ kubectl get md -n team-a
                NAME   AGE   ENGINE   PHASE   RETIREMENT   ROLES
                $ curl -s localhost:8080/q/metrics
                ```
                """;

        List<Command> commands = GuideCommands.read("docs/guides/new.md", page);

        assertThat(commands)
                .extracting(Command::text)
                .containsExactly(
                        "make bundle",
                        "kubectl describe md qwen",
                        "helm install ebb ./chart --namespace ebb-system",
                        "kubectl get pods -A",
                        "make publish",
                        "kubectl get md -n team-a",
                        "curl -s localhost:8080/q/metrics");
        assertThat(commands.get(5).shown()).containsExactly("NAME   AGE   ENGINE   PHASE   RETIREMENT   ROLES");
        assertThat(unrun(commands))
                .containsExactly(
                        "docs/guides/new.md:6: helm install ebb ./chart --namespace ebb-system: neither a make target nor"
                                + " a kubectl command the cluster tier runs",
                        "docs/guides/new.md:8: kubectl get pods -A: 0 checks of GuideCommands.CLUSTER_CHECKS cover it, not 1",
                        "docs/guides/new.md:9: make publish: names no single target of the Makefile",
                        "docs/guides/new.md:15: curl -s localhost:8080/q/metrics: neither a make target nor a kubectl"
                                + " command the cluster tier runs");
    }

    @Test
    void aBlockWithoutALanguageIsRefusedSinceACommandCouldHideInIt() {
        String page = """
                ```
                kubectl annotate md qwen serving.ebb.dev/refresh-hooks="$(date +%s)" --overwrite
                ```
                """;

        assertThatThrownBy(() -> GuideCommands.read("docs/guides/new.md", page))
                .hasMessageStartingWith("docs/guides/new.md:1: a fenced block without a language");
    }

    @Test
    void maskingLeavesWhatIsTheSameOnEveryRunAndHidesAgesHashesSuffixesAndOrdinals() {
        String once = """
                LAST SEEN   TYPE     REASON      OBJECT               MESSAGE
                45s         Normal   Completed   modeldeployment/qwen   qwen-router-7d9c5b8f6d-x2k4p gone after 6.1 s
                45s         Normal   PodCreated  modeldeployment/qwen   created qwen-server-r1-m0 at configuration c34d8d92f6
                45s         Normal   RetirementStarted   modeldeployment/qwen   retiring replica 2 of role server (ScaleDown)
                """;
        String again = """
                LAST SEEN   TYPE     REASON      OBJECT                 MESSAGE
                2m5s        Normal   Completed   modeldeployment/qwen   qwen-router-5f4b8c7d9-q8r2m gone after 12.4 s
                2m5s        Normal   PodCreated  modeldeployment/qwen   created qwen-server-r3-m0 at configuration b70c97dadd
                2m5s        Normal   RetirementStarted   modeldeployment/qwen   retiring replica 1 of role server (ScaleDown)
                """;

        assertThat(GuideCommands.masked(once)).isEqualTo(GuideCommands.masked(again));
        assertThat(GuideCommands.masked(once))
                .isNotEqualTo(GuideCommands.masked(once.replace("Completed", "ProvenIdle")));
    }

    /** The OLM catalog and the kind cluster need tools this machine lacks; their targets say so before anything runs. */
    @Test
    void theTargetsOfToolsThisMachineLacksSayWhatIsMissing() throws Exception {
        Map<String, String> noTools = Map.of("PATH", "/nonexistent:/usr/bin:/bin");

        MakeCommand catalog = MakeCommand.run(noTools, "catalog", "REGISTRY=registry.example/team");
        MakeCommand kind = MakeCommand.run(noTools, "kind");

        assertThat(catalog.exitCode()).isEqualTo(2);
        assertThat(catalog.output()).contains("'make catalog' needs opm on PATH");
        assertThat(kind.exitCode()).isEqualTo(2);
        assertThat(kind.output()).contains("'make kind' needs kind on PATH");
    }
}
