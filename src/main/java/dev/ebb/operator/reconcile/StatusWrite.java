package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.net.HttpURLConnection;

/**
 * Records a pass's decisions as the ModelDeployment's status, on condition that the ModelDeployment is still what the
 * pass decided from: the write carries the resourceVersion the pass read, so the API server refuses it once anyone
 * else has written since (a new leader above all). A refused write is never retried with the same status, which would
 * lay a stale decision over the newer one; the pass is dropped and the next decides afresh.
 */
final class StatusWrite {
    private StatusWrite() {}

    /** @return whether the status was written; false when the ModelDeployment changed since the pass read it */
    static boolean recorded(ModelDeployment read, ModelDeploymentStatus status, Context<ModelDeployment> context) {
        ModelDeployment desired =
                context.getClient().getKubernetesSerialization().clone(read);
        desired.setStatus(status);
        ModelDeployment written;
        try {
            written = context.getClient().resource(desired).updateStatus();
        } catch (KubernetesClientException e) {
            if (e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
                return false;
            }
            throw e;
        }
        // the next pass reads what was written, even before the watch brings it back
        context.eventSourceRetriever()
                .getControllerEventSource()
                .handleRecentResourceUpdate(ResourceID.fromResource(read), written, read);
        return true;
    }
}
