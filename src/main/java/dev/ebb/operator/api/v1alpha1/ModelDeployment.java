package dev.ebb.operator.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** One model served by one engine across one or more roles of replicas. */
@Group(ModelDeployment.GROUP)
@Version(ModelDeployment.VERSION)
@Kind("ModelDeployment")
@Plural("modeldeployments")
@ShortNames("md")
@Categories("ebb")
@AdditionalPrinterColumn(name = "Engine", jsonPath = ".spec.engine.name", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Roles", jsonPath = ".status.rolesSummary", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Retirement",
        jsonPath = ".status.retirementsSummary",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
@ValidationRule(
        value = "self.spec.roles.all(r, size(self.metadata.name) + size(r.name) <= " + ModelDeployment.MAX_NAME_BUDGET
                + ")",
        message = "metadata.name and spec.roles[].name together exceed " + ModelDeployment.MAX_NAME_BUDGET
                + " characters; Pod names <name>-<role>-r<ordinal>-m<member> must stay within a 63-character DNS label",
        fieldPath = ".spec.roles")
public class ModelDeployment extends CustomResource<ModelDeploymentSpec, ModelDeploymentStatus> implements Namespaced {
    public static final String GROUP = "serving.ebb.dev";
    public static final String VERSION = "v1alpha1";
    /** 63 minus "-" minus the longest "-r1023-m63" suffix. */
    public static final int MAX_NAME_BUDGET = 52;

    /** No status until the operator writes one, so that its first write adds the whole object. */
    @Override
    protected ModelDeploymentStatus initStatus() {
        return null;
    }
}
