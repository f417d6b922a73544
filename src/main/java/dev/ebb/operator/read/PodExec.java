package dev.ebb.operator.read;

import io.fabric8.kubernetes.api.model.Pod;
import io.smallrye.mutiny.Uni;
import java.util.List;

/**
 * Runs a command in a Pod's container. Implementations honour the limits themselves, release the connection
 * however the read ends (including cancellation), and complete with a result, never with a failure.
 */
public interface PodExec {
    Uni<ExecResult> exec(Pod pod, String container, ExecCommand command, ExecLimits limits);

    /** A command that reads nothing on stdin. */
    default Uni<ExecResult> exec(Pod pod, String container, List<String> argv, ExecLimits limits) {
        return exec(pod, container, ExecCommand.of(argv), limits);
    }
}
