package dev.ebb.operator.sim;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What the simulated kubelet did while a Pod went away, measured from the moment it saw the deletion.
 *
 * @param namespace and pod name the Pod that went
 * @param hook how long the preStop hook ran, when there was one
 * @param hookOutput what the hook wrote to stderr, one line per read for the drain hook
 * @param sigterm when the engine was sent SIGTERM, from the deletion
 * @param exited when the engine was gone (exited or killed), from the deletion
 * @param killed whether it was still running at the kill deadline: the grace, or 2 s after the hook if that is later
 */
public record Termination(
        String namespace,
        String pod,
        Instant deletionSeen,
        Optional<Duration> hook,
        String hookOutput,
        Duration sigterm,
        Duration exited,
        boolean killed) {}
