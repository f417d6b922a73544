package dev.ebb.operator.sim;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** When a Pod's deletion was first asked for, as a watcher polling the API server every 100 ms sees it. */
public final class DeletionWatch {
    private DeletionWatch() {}

    /** Completes when the Pod carries a deletion timestamp or is gone. */
    public static CompletableFuture<Instant> of(KubernetesClient client, String namespace, String name) {
        CompletableFuture<Instant> seen = new CompletableFuture<>();
        ScheduledExecutorService watcher =
                Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("deletion-watch"));
        watcher.scheduleAtFixedRate(
                () -> {
                    Pod pod =
                            client.pods().inNamespace(namespace).withName(name).get();
                    if (pod == null || pod.getMetadata().getDeletionTimestamp() != null) {
                        seen.complete(Instant.now());
                    }
                },
                0,
                100,
                TimeUnit.MILLISECONDS);
        seen.whenComplete((at, failure) -> watcher.shutdownNow());
        return seen;
    }
}
