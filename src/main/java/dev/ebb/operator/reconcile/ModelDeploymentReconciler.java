package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

public class ModelDeploymentReconciler implements Reconciler<ModelDeployment> {
    @Override
    public UpdateControl<ModelDeployment> reconcile(ModelDeployment resource, Context<ModelDeployment> context) {
        return UpdateControl.noUpdate();
    }
}
