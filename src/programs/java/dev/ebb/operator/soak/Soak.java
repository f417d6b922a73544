package dev.ebb.operator.soak;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.RouterKind;
import dev.ebb.operator.packaging.PackagedOperator;
import dev.ebb.operator.sim.AdmittingDispatcher;
import dev.ebb.operator.sim.LoadGenerator;
import dev.ebb.operator.sim.LocalExec;
import dev.ebb.operator.sim.SimApiServer;
import dev.ebb.operator.sim.SimRouterAddress;
import dev.ebb.operator.sim.SimWorld;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.Consumer;

/**
 * {@code make soak}: several ModelDeployments in one test world under continuous streaming load, with seeded chaos
 * (scaling, rollouts, Pod deletions, container restarts, node drains, operator restarts and leader changes, API fault
 * bursts, router restarts) for a number of minutes, and the invariants checked all along and at the end: no generation cut by a
 * removal the operator made, nothing deleted that was not proven idle, convergence to the spec after the chaos, no
 * object touched by another deployment's reconcile, no ERROR but from an injected fault. Exits 1 on any violation.
 *
 * <p>Options as system properties: {@code soak.seed} (a fresh one when absent, printed), {@code soak.minutes} of
 * chaos (10), {@code soak.deployments} (all five unless fewer are asked for).
 */
public final class Soak {
    static final String NAMESPACE = "soak";
    /** How long the deployments get to reach their spec once the chaos stops. */
    static final Duration CONVERGENCE = Duration.ofMinutes(3);
    /** The longest generation, and a little more: how long the last streams may take to end. */
    private static final Duration LAST_STREAMS = Duration.ofSeconds(100);
    /** After a burst of faults, how long errors from it may still surface (the client's retries back off). */
    private static final Duration FAULT_ECHO = Duration.ofSeconds(30);
    /**
     * After an operator restart or leader change, how long errors from it may still surface: a killed leader's Lease
     * stays taken until it expires, and only then does the next leader start.
     */
    private static final Duration RESTART_ECHO =
            LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE.plusSeconds(15);

    private Soak() {}

    /** The deployments, in the order {@code soak.deployments} takes a prefix of. */
    static List<SoakDeployment> fleet(int count) {
        List<SoakDeployment> all = List.of(
                new SoakDeployment("vllm-llmd", "vLLM", RouterKind.LLM_D_ROUTER, 1, 3, 3),
                new SoakDeployment("sglang-plain", "SGLang", null, 1, 2, 2),
                new SoakDeployment("vllm-vrouter", "vLLM", RouterKind.VLLM_ROUTER, 2, 2, 3),
                new SoakDeployment("sglang-smg", "SGLang", RouterKind.SGLANG_GATEWAY, 1, 2, 3),
                new SoakDeployment("sglang-llmd", "SGLang", RouterKind.LLM_D_ROUTER, 2, 2, 2));
        return all.subList(0, Math.max(1, Math.min(count, all.size())));
    }

    public static void main(String[] args) throws Exception {
        ErrorLog.chooseBackEnd();
        long seed = Optional.ofNullable(System.getProperty("soak.seed"))
                .filter(s -> !s.isBlank())
                .map(Long::parseLong)
                .orElseGet(() -> new Random().nextLong());
        double minutes = Optional.ofNullable(System.getProperty("soak.minutes"))
                .filter(s -> !s.isBlank())
                .map(Double::parseDouble)
                .orElse(10.0);
        int count = Integer.parseInt(Optional.ofNullable(System.getProperty("soak.deployments"))
                .filter(s -> !s.isBlank())
                .orElse("5"));
        Result result = run(seed, Duration.ofSeconds((long) (minutes * 60)), count, System.out);
        System.exit(result.violations().isEmpty() ? 0 : 1);
    }

    record Result(long seed, List<Violation> violations) {}

    static Result run(long seed, Duration chaosFor, int count, PrintStream out) throws Exception {
        Instant origin = Instant.now();
        Path logFile = Path.of("target", "soak", "soak-" + seed + ".log");
        ErrorLog errors = new ErrorLog(logFile);
        errors.proveCaptured();
        out.printf(
                Locale.ROOT,
                "Ebb soak: seed %d, %s of chaos (make soak SEED=%d MINUTES=%s draws the same choices again; what each lands on follows the world's timing)%n",
                seed,
                CutJudge.seconds(chaosFor),
                seed,
                minutesOf(chaosFor));
        out.println("Operator, SDK and client warnings: " + logFile.toAbsolutePath());
        Consumer<String> say = line -> out.printf(Locale.ROOT, "%8s  %s%n", CutJudge.at(Instant.now(), origin), line);
        Random random = new Random(seed);
        List<SoakDeployment> fleet = fleet(count);

        AdmittingDispatcher apiServer = SimApiServer.dispatcher();
        KubernetesMockServer server = SimApiServer.startServer(apiServer);
        KubernetesClient client = server.createClient();
        // its own User-Agent lets an API fault burst treat the operator apart from the world's kubelet and clients
        KubernetesClient operatorClient = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(client.getConfiguration())
                        .withUserAgent(Chaos.OPERATOR_AGENT)
                        .build())
                .build();
        SimRouterAddress routers = new SimRouterAddress();
        OperatorPods operators = new OperatorPods(operatorClient, routers);
        List<Violation> violations = new ArrayList<>();
        try (SimWorld world = new SimWorld(client);
                LocalExec exec = new LocalExec();
                Invariants invariants = new Invariants(client, NAMESPACE, origin, say)) {
            apiServer.grant(PackagedOperator.packagedRules());
            operators.start(exec);
            for (SoakDeployment d : fleet) {
                d.deploy(client, NAMESPACE, routers);
                say.accept("deployed " + d.name + ": " + d.engine + ", " + d.initialReplicas + " replicas of size "
                        + d.size + ", "
                        + (d.router == null ? "no router (clients through the Service)" : d.router.wireName()));
            }
            Instant ready = Instant.now().plus(CONVERGENCE);
            while (!invariants.unconverged().isEmpty() && Instant.now().isBefore(ready)) {
                sleep(500);
            }
            if (!invariants.unconverged().isEmpty()) {
                // a fake engine that cannot bind its address (another process on this machine holds it) never gets
                // Ready
                invariants.violation(
                        "convergence",
                        "the fleet never came up (if no engine is Ready, another process may hold the"
                                + " loopback addresses: LOOP=... moves them): " + invariants.unconverged());
                return report(seed, origin, out, fleet, invariants, null, errors, violations);
            }
            say.accept("all deployments ready; load starts");
            fleet.forEach(d -> d.startLoad(world.endpoints(), NAMESPACE, random));
            sleep(5_000);

            Chaos chaos = new Chaos(
                    random, client, NAMESPACE, fleet, world.kubelet(), apiServer, routers, operators, invariants, say);
            invariants.watchCuts(
                    () -> fleet.stream().flatMap(d -> d.sent().stream()).toList(), chaos::disruptions);
            chaos.run(Instant.now().plus(chaosFor));
            say.accept("chaos over; waiting up to " + CutJudge.seconds(CONVERGENCE)
                    + " for every deployment to reach its spec");
            retryAborted(client, say);
            Instant bound = Instant.now().plus(CONVERGENCE);
            List<String> problems = invariants.unconverged();
            while (!problems.isEmpty() && Instant.now().isBefore(bound)) {
                sleep(Invariants.CHECK_EVERY.toMillis());
                problems = invariants.unconverged();
            }
            if (problems.isEmpty()) {
                say.accept("converged");
            } else {
                problems.forEach(p -> invariants.violation(
                        "convergence", "not at its spec " + CutJudge.seconds(CONVERGENCE) + " after the chaos: " + p));
            }
            say.accept("stopping the load; the last streams end");
            fleet.forEach(SoakDeployment::stopSending);
            Instant lastStreams = Instant.now().plus(LAST_STREAMS);
            for (SoakDeployment d : fleet) {
                d.awaitLastStreams(lastStreams);
            }
            invariants.judgeDeletions(Instant.now().minusSeconds(5));
            return report(seed, origin, out, fleet, invariants, chaos, errors, violations);
        } finally {
            operators.close();
            fleet.forEach(SoakDeployment::close);
            operatorClient.close();
            client.close();
            server.destroy();
        }
    }

    /**
     * What a user would do once the disturbance is over: ask at once for the retirements that aborted (the retry
     * annotation), rather than wait out their cool-down. Each is still counted and printed as aborted.
     */
    private static void retryAborted(KubernetesClient client, Consumer<String> say) {
        for (ModelDeployment md : client.resources(ModelDeployment.class)
                .inNamespace(NAMESPACE)
                .list()
                .getItems()) {
            if (md.getStatus() != null
                    && md.getStatus().abortedRetirements() != null
                    && !md.getStatus().abortedRetirements().isEmpty()) {
                say.accept("retrying " + md.getMetadata().getName() + "'s aborted retirements: "
                        + md.getStatus().abortedRetirements());
                client.resources(ModelDeployment.class)
                        .inNamespace(NAMESPACE)
                        .withName(md.getMetadata().getName())
                        .edit(m -> {
                            m.getMetadata()
                                    .getAnnotations()
                                    .put(Annotations.RETRY_RETIREMENT, String.valueOf(System.currentTimeMillis()));
                            return m;
                        });
            }
        }
    }

    private static Result report(
            long seed,
            Instant origin,
            PrintStream out,
            List<SoakDeployment> fleet,
            Invariants invariants,
            Chaos chaos,
            ErrorLog errors,
            List<Violation> violations) {
        List<Sent> sent = fleet.stream().flatMap(d -> d.sent().stream()).toList();
        invariants.judgeCuts(Instant.now().plusSeconds(1));
        List<Disruption> disruptions = chaos == null ? List.of() : chaos.disruptions();
        long explained = 0;
        out.println();
        out.println("Cut generations:");
        for (Sent s : sent.stream()
                .filter(s -> s.request().outcome() == LoadGenerator.Outcome.CUT)
                .toList()) {
            CutJudge.Verdict v = CutJudge.judge(s, disruptions, origin);
            out.println("  " + (v.explained() ? "explained    " : "UNEXPLAINED  ") + v.why());
            if (v.explained()) {
                explained++;
            }
        }
        for (ErrorLog.Entry e : errors.errors()) {
            String cause = chaos == null ? null : injectedCause(e.at(), chaos);
            if (cause == null) {
                invariants.violation(
                        "error logged",
                        "at " + CutJudge.at(e.at(), origin) + " " + e.logger() + ": " + e.message()
                                + (e.stack().isEmpty() ? "" : "\n" + e.stack()));
            }
        }
        violations.addAll(invariants.violations());
        errors.close();
        violations.sort(java.util.Comparator.comparing(Violation::at));

        out.println();
        out.printf(Locale.ROOT, "Violations (seed %d): %d%n", seed, violations.size());
        for (Violation v : violations) {
            out.printf(Locale.ROOT, "  %8s  [%s] %s%n", CutJudge.at(v.at(), origin), v.invariant(), v.what());
        }
        out.println();
        out.printf(Locale.ROOT, "Summary (seed %d)%n", seed);
        out.println("  chaos injected");
        if (chaos != null) {
            chaos.injected()
                    .forEach((k, n) -> out.printf(
                            Locale.ROOT,
                            "    %-26s %5d%n",
                            k.name().toLowerCase(Locale.ROOT).replace('_', ' '),
                            n.get()));
        }
        out.println("  retirements");
        Map<String, Long> r = invariants.retirementCounts();
        for (String k : List.of("started", "completed", "aborted", "called off")) {
            out.printf(Locale.ROOT, "    %-26s %5d%n", k, r.get(k));
        }
        out.printf(Locale.ROOT, "    %-26s %5d%n", "operator deletions", invariants.operatorDeletions());
        out.printf(Locale.ROOT, "    %-26s %5d%n", "  of Pods that never ran", invariants.neverRanDeletions());
        out.println("  requests");
        for (LoadGenerator.Outcome o : LoadGenerator.Outcome.values()) {
            out.printf(
                    Locale.ROOT,
                    "    %-26s %5d%n",
                    o.name().toLowerCase(Locale.ROOT),
                    sent.stream().filter(s -> s.request().outcome() == o).count());
        }
        long cut = sent.stream()
                .filter(s -> s.request().outcome() == LoadGenerator.Outcome.CUT)
                .count();
        out.println("    rejected, by deployment and why (a client may retry these: nothing had streamed)");
        sent.stream()
                .filter(s -> s.request().outcome() == LoadGenerator.Outcome.REJECTED)
                .collect(java.util.stream.Collectors.groupingBy(
                        s -> s.deployment() + ": "
                                + String.valueOf(s.request().why()).replaceAll("[0-9.]+:[0-9]+", "<address>"),
                        java.util.TreeMap::new,
                        java.util.stream.Collectors.counting()))
                .forEach((why, n) -> out.printf(Locale.ROOT, "      %-60s %5d%n", why, n));
        out.printf(Locale.ROOT, "    %-26s %5d%n", "cuts explained", explained);
        out.printf(Locale.ROOT, "    %-26s %5d%n", "cuts unexplained", cut - explained);
        out.printf(
                Locale.ROOT,
                "  errors logged              %5d (%d from injected faults)%n",
                errors.errors().size(),
                errors.errors().stream()
                        .filter(e -> chaos != null && injectedCause(e.at(), chaos) != null)
                        .count());
        out.printf(Locale.ROOT, "  violations                 %5d%n", violations.size());
        out.println(violations.isEmpty() ? "PASS" : "FAIL (seed " + seed + ")");
        return new Result(seed, violations);
    }

    /** The injected fault an error may come from: a burst of API faults or an operator restart close before it. */
    private static String injectedCause(Instant at, Chaos chaos) {
        for (Chaos.Window w : chaos.faultWindows()) {
            if (!at.isBefore(w.from()) && !at.isAfter(w.to().plus(FAULT_ECHO))) {
                return "API faults";
            }
        }
        for (Instant restart : chaos.operatorRestarts()) {
            if (!at.isBefore(restart.minusSeconds(1)) && !at.isAfter(restart.plus(RESTART_ECHO))) {
                return "operator restart";
            }
        }
        return null;
    }

    private static String minutesOf(Duration d) {
        return d.toSeconds() % 60 == 0
                ? String.valueOf(d.toMinutes())
                : String.format(Locale.ROOT, "%.2f", d.toSeconds() / 60.0);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
