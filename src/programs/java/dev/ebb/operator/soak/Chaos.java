package dev.ebb.operator.soak;

import dev.ebb.operator.Specs;
import dev.ebb.operator.api.Labels;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.sim.AdmittingDispatcher;
import dev.ebb.operator.sim.SimKubelet;
import dev.ebb.operator.sim.UnreliableApi;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Injects the soak's chaos, one seeded choice after another: what, where and when all come from one
 * {@link Random}. Each injection that took effect is counted by kind, and each that can end a stream is recorded as
 * a {@link Disruption}, so that a cut can be laid against it.
 */
final class Chaos {
    enum Kind {
        SCALE,
        ROLLOUT,
        DELETE_POD,
        DELETE_POD_SHORT_GRACE,
        CONTAINER_RESTART,
        NODE_DRAIN,
        OPERATOR_RESTART,
        OPERATOR_DOUBLE_RESTART,
        LEADER_CHANGE,
        LEADER_PAUSE,
        API_FAULTS,
        ROUTER_RESTART
    }

    /** The share each kind gets of the choices. */
    private static final Map<Kind, Integer> WEIGHTS = new EnumMap<>(Map.ofEntries(
            Map.entry(Kind.SCALE, 4),
            Map.entry(Kind.ROLLOUT, 2),
            Map.entry(Kind.DELETE_POD, 2),
            Map.entry(Kind.DELETE_POD_SHORT_GRACE, 2),
            Map.entry(Kind.CONTAINER_RESTART, 2),
            Map.entry(Kind.NODE_DRAIN, 1),
            Map.entry(Kind.OPERATOR_RESTART, 2),
            Map.entry(Kind.OPERATOR_DOUBLE_RESTART, 1),
            Map.entry(Kind.LEADER_CHANGE, 1),
            Map.entry(Kind.LEADER_PAUSE, 2),
            Map.entry(Kind.API_FAULTS, 2),
            Map.entry(Kind.ROUTER_RESTART, 1)));
    /** The operator's User-Agent, which the API server's fault bursts single out. */
    static final String OPERATOR_AGENT = "ebb-operator-under-soak";

    private static final String STATUS_PATH = "/apis/serving.ebb.dev/v1alpha1/namespaces/%s/modeldeployments/%s/status";

    /** The operator's Pods, one leading and one standing by, which the chaos may stop and start again. */
    interface Operators {
        /** The leader's process is killed; a new Pod starts after {@code down}, and whoever gets the Lease next leads. */
        void restart(Duration down);

        /** The leader stops in order (SIGTERM, as a rolling update of the operator does) and a new Pod starts. */
        void changeLeader();

        /**
         * The leader's process is paused for {@code paused} (a long GC pause, a frozen cgroup) and then resumes; one
         * that lost its Lease meanwhile ends and a new Pod starts in its place.
         */
        void pauseLeader(Duration paused);
    }

    /** A burst of API faults: when it began and ended. */
    record Window(Instant from, Instant to) {}

    private final Random random;
    private final KubernetesClient client;
    private final String namespace;
    private final List<SoakDeployment> deployments;
    private final SimKubelet kubelet;
    private final AdmittingDispatcher apiServer;
    private final dev.ebb.operator.sim.SimRouterAddress routers;
    private final Operators operators;
    private final Invariants invariants;
    private final Consumer<String> log;
    private final Map<Kind, AtomicInteger> injected = new EnumMap<>(Kind.class);
    private final List<Disruption> disruptions = new CopyOnWriteArrayList<>();
    private final List<Window> faultWindows = new CopyOnWriteArrayList<>();
    private final List<Instant> operatorRestarts = new CopyOnWriteArrayList<>();
    private volatile Instant faultsLiftAt;
    /** One client per Pod of a drain, so that its evictions are in flight together. */
    private final java.util.concurrent.ExecutorService kubectl = java.util.concurrent.Executors.newCachedThreadPool(
            dev.ebb.operator.sim.DaemonThreads.named("soak-kubectl"));
    /** Lifts a burst on time even while the chaos thread waits on a request the burst itself holds up. */
    private final java.util.concurrent.ScheduledExecutorService lifter =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                    dev.ebb.operator.sim.DaemonThreads.named("soak-fault-lifter"));

    private int images;

    Chaos(
            Random random,
            KubernetesClient client,
            String namespace,
            List<SoakDeployment> deployments,
            SimKubelet kubelet,
            AdmittingDispatcher apiServer,
            dev.ebb.operator.sim.SimRouterAddress routers,
            Operators operators,
            Invariants invariants,
            Consumer<String> log) {
        this.random = random;
        this.client = client;
        this.namespace = namespace;
        this.deployments = deployments;
        this.kubelet = kubelet;
        this.apiServer = apiServer;
        this.routers = routers;
        this.operators = operators;
        this.invariants = invariants;
        this.log = log;
        for (Kind k : Kind.values()) {
            injected.put(k, new AtomicInteger());
        }
    }

    /** Injects one thing after another, 3 to 15 s apart, until {@code until}. */
    void run(Instant until) throws InterruptedException {
        while (Instant.now().isBefore(until)) {
            Thread.sleep(3_000 + random.nextInt(12_000));
            if (Instant.now().isBefore(until)) {
                injectOne();
            }
        }
        liftFaults();
        lifter.shutdownNow();
        kubectl.shutdown();
    }

    private void injectOne() {
        Kind kind = choose();
        SoakDeployment d = deployments.get(random.nextInt(deployments.size()));
        try {
            boolean done = switch (kind) {
                case SCALE -> scale(d);
                case ROLLOUT -> rollout(d);
                case DELETE_POD -> deletePods(Kind.DELETE_POD, List.of(d), 1, null);
                case DELETE_POD_SHORT_GRACE ->
                    deletePods(Kind.DELETE_POD_SHORT_GRACE, List.of(d), 1, 3 + random.nextInt(15));
                case NODE_DRAIN -> deletePods(Kind.NODE_DRAIN, deployments, 2 + random.nextInt(2), null);
                case CONTAINER_RESTART -> restartContainer(d);
                case OPERATOR_RESTART -> restartOperator(1);
                case OPERATOR_DOUBLE_RESTART -> restartOperator(2);
                case LEADER_CHANGE -> changeLeader();
                case LEADER_PAUSE -> pauseLeader();
                case API_FAULTS -> faults();
                case ROUTER_RESTART -> restartRouter();
            };
            if (done) {
                injected.get(kind).incrementAndGet();
            }
        } catch (KubernetesClientException e) {
            // an injected API fault may refuse the chaos itself, as it would refuse kubectl
            log.accept(kind + " refused: " + e.getMessage());
        }
    }

    private Kind choose() {
        int total = WEIGHTS.values().stream().mapToInt(Integer::intValue).sum();
        int pick = random.nextInt(total);
        for (Map.Entry<Kind, Integer> e : WEIGHTS.entrySet()) {
            pick -= e.getValue();
            if (pick < 0) {
                return e.getKey();
            }
        }
        throw new IllegalStateException("weights do not add up");
    }

    private boolean scale(SoakDeployment d) {
        int most = d.size == 1 ? 4 : 3;
        int now = current(d).getSpec().roles().get(0).replicas();
        int to = 1 + random.nextInt(most);
        if (to == now) {
            to = now == 1 ? 2 : now - 1;
        }
        log.accept("scale " + d.name + " " + now + " -> " + to);
        Specs.scale(client, namespace, d.name, SoakDeployment.ROLE, to);
        return true;
    }

    private boolean rollout(SoakDeployment d) {
        String image = "registry.example/" + d.engine.toLowerCase(java.util.Locale.ROOT) + ":soak-" + (++images);
        log.accept("rollout " + d.name + " to " + image);
        Specs.editRole(client, namespace, d.name, SoakDeployment.ROLE, r -> Specs.withImage(r, image));
        return true;
    }

    /** Deletes (one deployment) or evicts (a drain, across deployments) running Pods, all at once. */
    private boolean deletePods(Kind kind, List<SoakDeployment> from, int count, Integer grace) {
        List<Pod> running = new ArrayList<>(
                client.pods().inNamespace(namespace).withLabel(Labels.REPLICA).list().getItems().stream()
                        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                        .filter(p -> from.stream()
                                .anyMatch(d -> d.name.equals(
                                        p.getMetadata().getLabels().get(Labels.DEPLOYMENT))))
                        .toList());
        if (running.isEmpty()) {
            return false;
        }
        java.util.Collections.sort(
                running, java.util.Comparator.comparing(p -> p.getMetadata().getName()));
        List<Pod> chosen = new ArrayList<>();
        while (chosen.size() < count && !running.isEmpty()) {
            chosen.add(running.remove(random.nextInt(running.size())));
        }
        // a drain's evictions go out together, as kubectl drain sends them; a single deletion is the same with one Pod
        List<java.util.concurrent.CompletableFuture<Boolean>> sent = chosen.stream()
                .map(pod ->
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> deleteOne(kind, pod, grace), kubectl))
                .toList();
        return sent.stream().map(java.util.concurrent.CompletableFuture::join).reduce(false, Boolean::logicalOr);
    }

    private boolean deleteOne(Kind kind, Pod pod, Integer grace) {
        String name = pod.getMetadata().getName();
        invariants.outsideDeletion(pod.getMetadata().getUid());
        long podGrace = pod.getSpec().getTerminationGracePeriodSeconds() == null
                ? 30
                : pod.getSpec().getTerminationGracePeriodSeconds();
        Instant at = Instant.now();
        try {
            boolean taken;
            if (kind == Kind.NODE_DRAIN) {
                // fabric8 reports an eviction the API server answered 429 (a budget, or an injected fault) as false
                taken = client.pods().inNamespace(namespace).withName(name).evict();
            } else if (grace != null) {
                taken = !client.pods()
                        .inNamespace(namespace)
                        .withName(name)
                        .withGracePeriod(grace)
                        .delete()
                        .isEmpty();
            } else {
                taken = !client.pods()
                        .inNamespace(namespace)
                        .withName(name)
                        .delete()
                        .isEmpty();
            }
            if (!taken) {
                log.accept(kind + " of " + name + " not taken");
                return false;
            }
        } catch (KubernetesClientException e) {
            log.accept(kind + " of " + name + " refused: " + e.getMessage());
            return false;
        }
        long given = grace == null ? podGrace : Math.min(grace, podGrace);
        disruptions.add(new Disruption(
                kind == Kind.NODE_DRAIN ? Disruption.Kind.DRAIN : Disruption.Kind.DELETE_POD,
                name,
                at,
                Duration.ofSeconds(given)));
        log.accept(kind + " " + name + " (grace " + given + " s)");
        return true;
    }

    private boolean restartContainer(SoakDeployment d) {
        List<Pod> running = client
                .pods()
                .inNamespace(namespace)
                .withLabel(Labels.DEPLOYMENT, d.name)
                .withLabel(Labels.REPLICA)
                .list()
                .getItems()
                .stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null
                        && p.getStatus() != null
                        && "Running".equals(p.getStatus().getPhase()))
                .sorted(java.util.Comparator.comparing(p -> p.getMetadata().getName()))
                .toList();
        if (running.isEmpty()) {
            return false;
        }
        String name = running.get(random.nextInt(running.size())).getMetadata().getName();
        Instant at = Instant.now();
        try {
            kubelet.restartContainer(namespace, name);
        } catch (java.io.IOException | IllegalArgumentException e) {
            log.accept("container restart of " + name + " failed: " + e.getMessage());
            return false;
        }
        disruptions.add(new Disruption(Disruption.Kind.CONTAINER_RESTART, name, at, Duration.ZERO));
        log.accept("container restart " + name);
        return true;
    }

    private boolean changeLeader() {
        operatorRestarts.add(Instant.now());
        log.accept("leader change: the leading operator stops in order, a new one starts");
        operators.changeLeader();
        return true;
    }

    /** Paused for 2 to 30 s: shorter than the Lease's 15 s, the leader resumes leading; longer, a standby takes over. */
    private boolean pauseLeader() {
        Duration paused = Duration.ofMillis(2_000 + random.nextInt(28_000));
        operatorRestarts.add(Instant.now());
        log.accept("leader pause of " + paused.toMillis() + " ms");
        operators.pauseLeader(paused);
        // what the resumed operator logs as it finds its Lease lost comes from the pause
        operatorRestarts.add(Instant.now());
        return true;
    }

    private boolean restartOperator(int times) {
        for (int i = 0; i < times; i++) {
            Duration down = Duration.ofMillis(random.nextInt(4000));
            operatorRestarts.add(Instant.now());
            log.accept("operator restart" + (times > 1 ? " " + (i + 1) + " of " + times : "") + ", down "
                    + down.toMillis() + " ms");
            operators.restart(down);
            if (i + 1 < times) {
                sleep(500 + random.nextInt(3000));
            }
        }
        return true;
    }

    /**
     * For 3 to 15 s, the API server answers 503 or 429 to the operator's own writes of chosen deployments: status
     * writes, Pod creations and deletions, Events. Not Pod patches, which the kubelet shares (a failed bind or
     * finalizer release is never tried again by the fake kubelet, which a real one would). Beside that, a fifth of
     * every other write of the operator is refused (500, 429, or 409 for an update), its answers come up to half a
     * second late, and every watch is expired at the start of the burst, so that every informer lists again.
     */
    private boolean faults() {
        if (faultsLiftAt != null) {
            return false;
        }
        int code = random.nextBoolean() ? 503 : 429;
        List<String> chosen = new ArrayList<>();
        for (SoakDeployment d : deployments) {
            if (random.nextInt(3) == 0 || chosen.isEmpty() && d == deployments.get(deployments.size() - 1)) {
                chosen.add(d.name);
                String status = String.format(STATUS_PATH, namespace, d.name);
                apiServer.fail("PATCH", status, code);
                apiServer.fail("PUT", status, code);
                client.pods()
                        .inNamespace(namespace)
                        .withLabel(Labels.DEPLOYMENT, d.name)
                        .list()
                        .getItems()
                        .forEach(p -> apiServer.fail(
                                "DELETE",
                                "/api/v1/namespaces/" + namespace + "/pods/"
                                        + p.getMetadata().getName(),
                                code));
            }
        }
        apiServer.fail("POST", "/api/v1/namespaces/" + namespace + "/pods", code);
        apiServer.fail("POST", "/api/v1/namespaces/" + namespace + "/events", code);
        apiServer.unreliable(new UnreliableApi(OPERATOR_AGENT, 0.2, Duration.ofMillis(500), random.nextLong()));
        int expired = apiServer.expireWatches();
        Duration lasting = Duration.ofSeconds(3 + random.nextInt(13));
        faultsLiftAt = Instant.now().plus(lasting);
        faultWindows.add(new Window(Instant.now(), faultsLiftAt));
        lifter.schedule(this::liftFaultsIfDue, lasting.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        log.accept("API faults " + code + " for " + lasting.toSeconds() + " s on " + chosen
                + ", a fifth of other writes refused, " + expired + " watches expired");
        return true;
    }

    private synchronized void liftFaultsIfDue() {
        Instant due = faultsLiftAt;
        if (due != null && !Instant.now().isBefore(due)) {
            liftFaults();
        }
    }

    /** Waits out a burst under way, then lifts it. */
    synchronized void liftFaults() {
        Instant due = faultsLiftAt;
        if (due != null) {
            sleep(Math.max(0, Duration.between(Instant.now(), due).toMillis()));
            apiServer.lift();
            apiServer.reliable();
            faultsLiftAt = null;
        }
    }

    private boolean restartRouter() {
        List<SoakDeployment> routed =
                deployments.stream().filter(d -> d.router != null).toList();
        SoakDeployment d = routed.get(random.nextInt(routed.size()));
        Instant at = Instant.now();
        d.restartRouter(client, namespace, routers);
        disruptions.add(new Disruption(Disruption.Kind.ROUTER_RESTART, d.name, at, Duration.ZERO));
        log.accept("router restart " + d.name);
        return true;
    }

    private ModelDeployment current(SoakDeployment d) {
        return client.resources(ModelDeployment.class)
                .inNamespace(namespace)
                .withName(d.name)
                .get();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    Map<Kind, AtomicInteger> injected() {
        return injected;
    }

    List<Disruption> disruptions() {
        return List.copyOf(disruptions);
    }

    List<Window> faultWindows() {
        return List.copyOf(faultWindows);
    }

    List<Instant> operatorRestarts() {
        return List.copyOf(operatorRestarts);
    }
}
