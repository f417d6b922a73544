package dev.ebb.operator.sandbox;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.function.IntSupplier;

/**
 * What a run does: a vLLM role of {@code replicas} behind a router, streaming load of mixed lengths, then the steps in
 * order. The same choreography is played for each {@link Removal}, so their counts compare.
 */
public record Choreography(String title, int replicas, int grace, Load load, Duration warmUp, List<Step> steps) {
    private static final String NEW_IMAGE = "vllm/vllm-openai:v0.12.0";

    /** @param clients each sends one request after another; lengths are drawn from minTokens..maxTokens */
    public record Load(int clients, int minTokens, int maxTokens, Duration tokenInterval) {
        /** The same lengths in the same order for every removal compared. */
        public IntSupplier lengths() {
            Random random = new Random(7);
            return () -> minTokens + random.nextInt(maxTokens - minTokens + 1);
        }

        public Duration longest() {
            return tokenInterval.multipliedBy(maxTokens);
        }

        @Override
        public String toString() {
            return String.format("%d clients, generations of %.0f-%.0f s", clients, tokenInterval.multipliedBy(minTokens).toMillis() / 1000.0,
                    longest().toMillis() / 1000.0);
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
        return new Choreography("4 replicas -> 2, then one Pod deleted by hand", 4, 30,
                new Load(6, 20, 120, Duration.ofMillis(100)), Duration.ofSeconds(6),
                List.of(new ScaleTo(2), new Pause(Duration.ofSeconds(8)), new DeleteByHand(0)));
    }

    /** The CI's shortened sandbox: the same steps with shorter generations. */
    public static Choreography smoke() {
        return new Choreography("smoke: 4 replicas -> 2, then one Pod deleted by hand", 4, 30,
                new Load(6, 10, 40, Duration.ofMillis(100)), Duration.ofSeconds(3),
                List.of(new ScaleTo(2), new Pause(Duration.ofSeconds(3)), new DeleteByHand(0)));
    }

    /** Generations long enough that a fixed 15 s sleep is not always enough; grace to cover the longest. */
    private static final Load LONG_MIXED = new Load(8, 50, 400, Duration.ofMillis(100));

    public static Choreography scaleDownBench() {
        return new Choreography("scale-down 4 -> 2 under load", 4, 60, LONG_MIXED, Duration.ofSeconds(15), List.of(new ScaleTo(2)));
    }

    public static Choreography rolloutBench() {
        return new Choreography("rollout of 3 replicas under load", 3, 60, LONG_MIXED, Duration.ofSeconds(15), List.of(new Rollout(NEW_IMAGE)));
    }
}
