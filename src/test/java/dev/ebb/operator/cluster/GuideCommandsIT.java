package dev.ebb.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.docs.GuideCommands;
import dev.ebb.operator.docs.GuideCommands.ClusterCheck;
import dev.ebb.operator.docs.GuideCommands.Command;
import dev.ebb.operator.packaging.MakeCommand;
import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.sim.RecordedEvents;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.readiness.Readiness;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every kubectl command of the README and the guides, run as written (through sh, with the release's kubectl first on
 * PATH) on the real control plane with the packaged operator running: the README's ModelDeployment applied, then
 * scaled down, and the installing guide's kind sample applied and scaled. A command without a namespace runs in the
 * README's, as a kubeconfig whose context names it would. Each must exit 0 and show what the docs say it shows; where
 * a console block of the docs shows what a command printed, it printed that, but for what differs from run to run.
 */
class GuideCommandsIT {
    private static final String NS = "team-a";
    private static final String SAMPLE_NS = "demo";
    private static final Duration COMMAND_LIMIT = Duration.ofSeconds(60);
    /** What the commands printed, for the docs' console blocks. */
    private static final Path CAPTURED = Path.of("target", "cluster", "guide-commands.txt");

    /**
     * Events told only when a pass falls at a given moment: the candidates' reads outlasting a pass (seen on a loaded
     * machine), and the count of replicas still to leave between two retirements that end close together.
     */
    private static final Set<String> TIMED = Set.of("ChoosingReplica", "ScalingDown");

    private static ClusterWorld world;
    private static KubernetesClient admin;
    private static Path kubeconfig;

    @BeforeAll
    static void start() throws Exception {
        world = ClusterWorld.start(NS, NS + "," + SAMPLE_NS);
        admin = world.admin;
        kubeconfig = Files.createTempFile("guide-commands", ".kubeconfig");
        Files.copy(world.plane.adminKubeconfig(), kubeconfig, StandardCopyOption.REPLACE_EXISTING);
        run(new Command(
                "the kubeconfig's context", "kubectl config set-context --current --namespace=" + NS, List.of()));
    }

    @AfterAll
    static void stop() throws IOException {
        if (world != null) {
            admin.namespaces().withName(SAMPLE_NS).delete();
            world.close();
        }
        if (kubeconfig != null) {
            Files.deleteIfExists(kubeconfig);
        }
    }

    @Test
    void everyKubectlCommandOfTheDocsExitsZeroAndShowsWhatTheDocsSay() throws Exception {
        List<Command> commands = GuideCommands.kubectl();
        assertThat(commands)
                .as("every kubectl command of the docs, each run under one check")
                .isNotEmpty()
                .allSatisfy(c -> assertThat(GuideCommands.checksOf(c)).hasSize(1));
        admin.resource(readmeDeployment()).create();
        await("the README's ModelDeployment Ready")
                .atMost(Duration.ofSeconds(120))
                .untilAsserted(() -> assertThat(status("qwen", NS).phase())
                        .as(ClusterState.describe(admin, NS))
                        .isEqualTo("Ready"));
        MakeCommand install = MakeCommand.run(makeEnvironment(), "install");
        assertThat(install.exitCode()).as(install.output()).isZero();

        StringBuilder captured = new StringBuilder();
        try {
            for (ClusterCheck check : GuideCommands.CLUSTER_CHECKS) {
                for (Command command : commands.stream().filter(check::covers).toList()) {
                    String out = check.watch() ? watched(command, check) : run(command);
                    captured.append("$ ").append(command.text()).append('\n').append(out);
                    assertThat(out)
                            .as("%s printed %s", command, check.name())
                            .satisfies(o ->
                                    check.shows().forEach(p -> assertThat(o).containsPattern(p)));
                    if (!command.shown().isEmpty()) {
                        assertShownAsPrinted(command, out);
                    }
                }
                afterwards(check);
            }
        } finally {
            Files.createDirectories(CAPTURED.getParent());
            Files.writeString(CAPTURED, captured);
            deleteOperatorDeployment();
        }
    }

    /**
     * What the docs show a command printing is what it printed: the same lines, in any order (kubectl sorts Events of
     * the same second as it finds them), each masked. Events a pass tells only when it falls at a given moment may
     * differ in number; the docs' reasons among them must still have been told.
     */
    private static void assertShownAsPrinted(Command command, String out) {
        List<String> printed = GuideCommands.masked(out).lines().toList();
        List<String> shown =
                GuideCommands.masked(String.join("\n", command.shown())).lines().toList();
        assertThat(shown.get(0)).as("%s shows its header first", command).isEqualTo(printed.get(0));
        assertThat(untimed(shown))
                .as("what %s shows, against what it printed:%n%s", command, out)
                .containsExactlyInAnyOrderElementsOf(untimed(printed));
        assertThat(timedReasons(printed))
                .as("what %s shows, against what it printed:%n%s", command, out)
                .containsAll(timedReasons(shown));
    }

    private static List<String> untimed(List<String> lines) {
        return lines.stream().filter(l -> timedReason(l).isEmpty()).toList();
    }

    private static Set<String> timedReasons(List<String> lines) {
        return lines.stream()
                .map(GuideCommandsIT::timedReason)
                .flatMap(Optional::stream)
                .collect(Collectors.toSet());
    }

    /** The reason of an Event line that is one of {@link #TIMED}. */
    private static Optional<String> timedReason(String maskedLine) {
        String[] columns = maskedLine.split(" ");
        return columns.length > 2 && TIMED.contains(columns[2]) ? Optional.of(columns[2]) : Optional.empty();
    }

    /** What a step leaves for the next one to find. */
    private static void afterwards(ClusterCheck check) throws Exception {
        if (check == GuideCommands.OPERATOR_DEPLOYMENT) {
            deleteOperatorDeployment();
        } else if (check == GuideCommands.SCALE_QWEN) {
            await("the scale-down done and told")
                    .atMost(Duration.ofSeconds(150))
                    .untilAsserted(() -> {
                        assertThat(enginePods("qwen", NS))
                                .as(ClusterState.describe(admin, NS))
                                .isEqualTo(2);
                        assertThat(status("qwen", NS).retirements()).isNullOrEmpty();
                        assertThat(status("qwen", NS).phase()).isEqualTo("Ready");
                        assertThat(reasons("qwen", NS))
                                .filteredOn("Completed"::equals)
                                .hasSize(2);
                    });
        } else if (check == GuideCommands.REFRESH) {
            String asked = admin.resources(ModelDeployment.class)
                    .inNamespace(NS)
                    .withName("qwen")
                    .get()
                    .getMetadata()
                    .getAnnotations()
                    .get(Annotations.REFRESH_HOOKS);
            await("the refresh carried out: no replica was behind")
                    .atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(status("qwen", NS).hooksRefreshedFor())
                            .as(ClusterState.describe(admin, NS))
                            .isEqualTo(asked));
        } else if (check == GuideCommands.SAMPLE_SCALE) {
            await("the sample at two replicas")
                    .atMost(Duration.ofSeconds(90))
                    .untilAsserted(() -> assertThat(status("tiny", SAMPLE_NS).rolesSummary())
                            .as(ClusterState.describe(admin, SAMPLE_NS))
                            .isEqualTo("server 2/2"));
            // "then back to 1: the leaving replica is proven idle first"
            world.kubectl("scale", "md", "tiny", "-n", SAMPLE_NS, "--replicas", "1");
            await("back to one, proven idle first")
                    .atMost(Duration.ofSeconds(120))
                    .untilAsserted(() -> {
                        assertThat(reasons("tiny", SAMPLE_NS))
                                .as(ClusterState.describe(admin, SAMPLE_NS))
                                .contains("ProvenIdle", "Completed");
                        assertThat(enginePods("tiny", SAMPLE_NS)).isEqualTo(1);
                    });
        }
    }

    /** The ModelDeployment of the README's YAML block, as it is written there. */
    private static ModelDeployment readmeDeployment() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        for (String block : readme.split("```yaml\n")) {
            String yaml = block.substring(0, Math.max(0, block.indexOf("```")));
            if (yaml.contains("kind: ModelDeployment")) {
                return Serialization.unmarshal(yaml, ModelDeployment.class);
            }
        }
        throw new AssertionError("the README shows no ModelDeployment");
    }

    /** The command as a reader runs it: sh in the project's directory, the release's kubectl first on PATH. */
    private static ProcessBuilder shell(Command command, Path errors) {
        ProcessBuilder builder = new ProcessBuilder("sh", "-c", command.text())
                .directory(Path.of("").toAbsolutePath().toFile())
                .redirectError(errors.toFile());
        builder.environment().putAll(kubectlEnvironment());
        return builder;
    }

    private static Map<String, String> kubectlEnvironment() {
        Map<String, String> env = new HashMap<>();
        env.put("KUBECONFIG", kubeconfig.toString());
        env.put("PATH", world.plane.release().directory() + File.pathSeparator + System.getenv("PATH"));
        return env;
    }

    private static Map<String, String> makeEnvironment() {
        Map<String, String> env = kubectlEnvironment();
        env.put("KUBECTL", world.plane.release().binary("kubectl").toString());
        return env;
    }

    private static String run(Command command) throws Exception {
        Path errors = Files.createTempFile("guide-command", ".err");
        try {
            Process process = shell(command, errors).start();
            process.getOutputStream().close();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(process.waitFor(COMMAND_LIMIT.toSeconds(), TimeUnit.SECONDS))
                    .as("%s ends", command)
                    .isTrue();
            assertThat(process.exitValue())
                    .as("%s exits 0; it printed %s and said %s", command, out, Files.readString(errors))
                    .isZero();
            return out;
        } finally {
            Files.deleteIfExists(errors);
        }
    }

    /** A command that watches, read until its output shows what its check looks for, then stopped. */
    private static String watched(Command command, ClusterCheck check) throws Exception {
        Path errors = Files.createTempFile("guide-command", ".err");
        Process process = shell(command, errors).start();
        StringBuffer out = new StringBuffer();
        Thread reader = new Thread(() -> {
            try {
                byte[] chunk = new byte[4096];
                for (int n; (n = process.getInputStream().read(chunk)) > 0; ) {
                    out.append(new String(chunk, 0, n, StandardCharsets.UTF_8));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        reader.setDaemon(true);
        reader.start();
        try {
            await(command + " shows what it is read for")
                    .atMost(Duration.ofSeconds(150))
                    .untilAsserted(() -> {
                        assertThat(process.isAlive() || process.exitValue() == 0)
                                .as("%s still runs; it said %s", command, Files.readString(errors))
                                .isTrue();
                        check.shows().forEach(p -> assertThat(out.toString()).containsPattern(p));
                    });
            return out.toString();
        } finally {
            process.destroy();
            process.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(errors);
        }
    }

    private static ModelDeploymentStatus status(String name, String namespace) {
        ModelDeployment md = admin.resources(ModelDeployment.class)
                .inNamespace(namespace)
                .withName(name)
                .get();
        assertThat(md.getStatus()).as("the status of %s", name).isNotNull();
        return md.getStatus();
    }

    /** The engine Pods of a ModelDeployment that are Ready, its router's left out. */
    private static long enginePods(String deployment, String namespace) {
        return admin.pods().inNamespace(namespace).withLabel(Labels.DEPLOYMENT, deployment).list().getItems().stream()
                .filter(p -> p.getMetadata().getLabels().containsKey(Labels.ROLE))
                .filter(Readiness::isPodReady)
                .count();
    }

    private static List<String> reasons(String deployment, String namespace) {
        List<String> reasons = new ArrayList<>();
        for (Event event : RecordedEvents.occurrences(admin, namespace)) {
            if (deployment.equals(event.getInvolvedObject().getName())) {
                reasons.add(event.getReason());
            }
        }
        return reasons;
    }

    private static void deleteOperatorDeployment() {
        admin.apps()
                .deployments()
                .inNamespace(PackagedOperator.NAMESPACE)
                .withName("ebb-operator")
                .delete();
    }
}
