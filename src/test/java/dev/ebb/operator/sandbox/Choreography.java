package dev.ebb.operator.sandbox;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * What a run does: a vLLM role of {@code replicas}, a fixed set of streamed requests sent through {@code path}, then the
 * steps in order. The same choreography is played for each {@link Removal}, so their counts compare.
 */
public record Choreography(String title, ClientPath path, int replicas, int grace, Load load, Duration warmUp, List<Step> steps) {
    private static final String NEW_IMAGE = "vllm/vllm-openai:v0.12.0";

    /** How clients reach the role's engines. */
    public enum ClientPath {
        ROUTER("with a router: clients stream through llm-d-router's client entry"),
        SERVICE("without a router: clients stream through the role's Service, kube-proxy picking an endpoint per new connection");

        private final String description;

        ClientPath(String description) {
            this.description = description;
        }

        public String description() {
            return description;
        }
    }

    /**
     * A fixed set of {@code requests} completions, their lengths drawn once from minTokens..maxTokens with a fixed seed,
     * so every removal compared serves the very same requests. {@code clients} take them in order, one after another
     * each; client i starts {@code i × stagger} after the first, so the generations in flight are not all of one age.
     */
    public record Load(int clients, int requests, int minTokens, int maxTokens, Duration tokenInterval, Duration stagger) {
        public List<Integer> lengths() {
            Random random = new Random(7);
            return IntStream.range(0, requests).mapToObj(i -> minTokens + random.nextInt(maxTokens - minTokens + 1)).toList();
        }

        /** How long a generation of this many tokens streams. */
        public Duration duration(int tokens) {
            return tokenInterval.multipliedBy(tokens);
        }

        public Duration longest() {
            return duration(maxTokens);
        }

        @Override
        public String toString() {
            return String.format("%d requests (generations of %.0f-%.0f s, seeded) from %d clients", requests,
                    duration(minTokens).toMillis() / 1000.0, longest().toMillis() / 1000.0, clients);
        }
    }

    public sealed interface Step {
    }

    /** `kubectl scale`: the role's replicas set to this. */
    public record ScaleTo(int replicas) implements Step {
        @Override
        public String toString() {
            return "scale to " + replicas;
        }
    }

    /** `kubectl delete pod` on one replica's Pod. */
    public record DeleteByHand(int ordinal) implements Step {
        @Override
        public String toString() {
            return "kubectl delete pod r" + ordinal;
        }
    }

    /** A new engine image: every replica is replaced. */
    public record Rollout(String image) implements Step {
        @Override
        public String toString() {
            return "roll out " + image;
        }
    }

    /** Time passing between two steps. */
    public record Pause(Duration time) implements Step {
        @Override
        public String toString() {
            return "wait " + time.toSeconds() + " s";
        }
    }

    /** `make run`: 4 replicas under load scaled to 2, then one more Pod deleted by hand. */
    public static Choreography sandbox() {
        return new Choreography("4 replicas -> 2, then one Pod deleted by hand", ClientPath.ROUTER, 4, 30,
                new Load(6, 30, 20, 120, Duration.ofMillis(100), Duration.ofMillis(500)), Duration.ofSeconds(6),
                List.of(new ScaleTo(2), new Pause(Duration.ofSeconds(8)), new DeleteByHand(0)));
    }

    /** The CI's shortened sandbox: the same steps with shorter generations. */
    public static Choreography smoke() {
        return new Choreography("smoke: 4 replicas -> 2, then one Pod deleted by hand", ClientPath.ROUTER, 4, 30,
                new Load(6, 36, 10, 40, Duration.ofMillis(100), Duration.ofMillis(200)), Duration.ofSeconds(3),
                List.of(new ScaleTo(2), new Pause(Duration.ofSeconds(3)), new DeleteByHand(0)));
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
        return new Choreography("rollout of 3 replicas", ClientPath.ROUTER, 3, 30, BENCH_LOAD, BENCH_WARM_UP, List.of(new Rollout(NEW_IMAGE)));
    }
}
