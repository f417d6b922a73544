package dev.ebb.operator.sandbox;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * What a run does: a vLLM role of {@code replicas}, a fixed set of streamed requests sent through {@code path}, then the
 * steps in order. The same choreography is played for each {@link Removal}, so their counts compare.
 */
public record Choreography(
        String title, ClientPath path, int replicas, int grace, Load load, Duration warmUp, List<Step> steps) {
    private static final String NEW_IMAGE = "vllm/vllm-openai:v0.12.0";

    /** How clients reach the role's engines. */
    public enum ClientPath {
        ROUTER("with a router: clients stream through llm-d-router's client entry"),
        SERVICE(
                "without a router: clients stream through the role's Service, kube-proxy picking an endpoint per new connection");

        private final String description;

        ClientPath(String description) {
            this.description = description;
        }

        public String description() {
            return description;
        }
    }

    /**
     * A fixed set of {@code requests} completions, their lengths drawn once with a fixed seed, so every removal compared
     * serves the very same requests: from minTokens..maxTokens, except every {@code longEvery}-th request (the first
     * included) from the long band when there is one. {@code clients} take them in order, one after another each;
     * client i starts {@code i × stagger} after the first, so the generations in flight are not all of one age.
     */
    public record Load(
            int clients,
            int requests,
            int minTokens,
            int maxTokens,
            Duration tokenInterval,
            Duration stagger,
            Band longBand,
            int longEvery) {
        public Load {
            if (longBand != null && longEvery < 1) {
                throw new IllegalArgumentException("longEvery must be 1 or more with a long band, not " + longEvery);
            }
        }

        /** Generations of minTokens..maxTokens tokens. */
        public record Band(int minTokens, int maxTokens) {}

        /** One band only: every length drawn from minTokens..maxTokens. */
        public Load(int clients, int requests, int minTokens, int maxTokens, Duration tokenInterval, Duration stagger) {
            this(clients, requests, minTokens, maxTokens, tokenInterval, stagger, null, 0);
        }

        public List<Integer> lengths() {
            Random random = new Random(7);
            return IntStream.range(0, requests)
                    .mapToObj(i -> isLong(i)
                            ? draw(random, longBand.minTokens(), longBand.maxTokens())
                            : draw(random, minTokens, maxTokens))
                    .toList();
        }

        private boolean isLong(int index) {
            return longBand != null && index % longEvery == 0;
        }

        private static int draw(Random random, int min, int max) {
            return min + random.nextInt(max - min + 1);
        }

        /** How long a generation of this many tokens streams. */
        public Duration duration(int tokens) {
            return tokenInterval.multipliedBy(tokens);
        }

        public Duration longest() {
            return duration(longBand == null ? maxTokens : Math.max(maxTokens, longBand.maxTokens()));
        }

        @Override
        public String toString() {
            String lengths = String.format(Locale.ROOT, "%s-%s s", seconds(minTokens), seconds(maxTokens));
            if (longBand != null) {
                lengths += String.format(
                        Locale.ROOT,
                        ", 1 in %d of %s-%s s",
                        longEvery,
                        seconds(longBand.minTokens()),
                        seconds(longBand.maxTokens()));
            }
            return String.format(
                    Locale.ROOT, "%d requests (generations of %s, seeded) from %d clients", requests, lengths, clients);
        }

        private String seconds(int tokens) {
            return String.format(Locale.ROOT, "%.0f", duration(tokens).toMillis() / 1000.0);
        }
    }

    public sealed interface Step {}

    /** `kubectl scale`: the role's replicas set to this. */
    public record ScaleTo(int replicas) implements Step {
        @Override
        public String toString() {
            return "scale to " + replicas;
        }
    }

    /** A new engine image: every replica is replaced. */
    public record Rollout(String image) implements Step {
        @Override
        public String toString() {
            return "roll out " + image;
        }
    }

    /**
     * {@code make run}: 4 replicas under load scaled to 2. Most generations are short, but every third outlasts the grace
     * (30 s), as a long answer or a reasoning trace does, so waiting in a preStop hook cannot save it.
     */
    public static Choreography sandbox() {
        return new Choreography(
                "4 replicas scaled to 2 under streaming load",
                ClientPath.ROUTER,
                4,
                30,
                new Load(8, 32, 10, 80, Duration.ofMillis(100), Duration.ofMillis(500), new Load.Band(350, 600), 3),
                Duration.ofSeconds(10),
                List.of(new ScaleTo(2)));
    }

    /** The CI's shortened sandbox: the same step, short generations shorter and long ones just over the grace. */
    public static Choreography smoke() {
        return new Choreography(
                "smoke: 4 replicas scaled to 2",
                ClientPath.ROUTER,
                4,
                30,
                new Load(8, 24, 5, 20, Duration.ofMillis(100), Duration.ofMillis(250), new Load.Band(320, 360), 3),
                Duration.ofSeconds(5),
                List.of(new ScaleTo(2)));
    }

    /**
     * The benchmarks' load: generations of 5 to 120 s, 12 clients (3 per replica of 4), 20 requests in all, so the
     * set is done in about two and a half minutes and new requests still arrive while replicas leave.
     */
    static final Load BENCH_LOAD = new Load(12, 20, 50, 1200, Duration.ofMillis(100), Duration.ofSeconds(1));
    /** Long enough for every client to have started and some early generations to have ended. */
    private static final Duration BENCH_WARM_UP = Duration.ofSeconds(20);

    public static Choreography scaleDownBench(ClientPath path) {
        return new Choreography("scale-down 4 -> 2", path, 4, 30, BENCH_LOAD, BENCH_WARM_UP, List.of(new ScaleTo(2)));
    }

    public static Choreography rolloutBench() {
        return new Choreography(
                "rollout of 3 replicas",
                ClientPath.ROUTER,
                3,
                30,
                BENCH_LOAD,
                BENCH_WARM_UP,
                List.of(new Rollout(NEW_IMAGE)));
    }
}
