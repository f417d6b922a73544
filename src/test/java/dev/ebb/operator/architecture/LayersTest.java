package dev.ebb.operator.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * How the operator's packages depend on each other. The cores (the API types and resolver, the renderers, the drain
 * timeline, the retirement machine, the Prometheus reader) take values and return values; the shells (the
 * reconciler, the readers that exec into Pods, the routers' clients) do the I/O and call them, never the other way.
 */
@AnalyzeClasses(packages = "dev.ebb.operator", importOptions = ImportOption.DoNotIncludeTests.class)
class LayersTest {
    private static final String[] CORES = {
        "dev.ebb.operator.api..", "dev.ebb.operator.render..", "dev.ebb.operator.drain..", "dev.ebb.operator.retire.."
    };

    @ArchTest
    static final ArchRule coresReachNoShell = noClasses()
            .that()
            .resideInAnyPackage(CORES)
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("dev.ebb.operator.reconcile..", "dev.ebb.operator.lifecycle..");

    /** The client's package also holds the model's base class for custom resources, which the API types extend. */
    @ArchTest
    static final ArchRule coresHoldNoClient = noClasses()
            .that()
            .resideInAnyPackage(CORES)
            .should()
            .dependOnClassesThat(resideInAPackage("io.fabric8.kubernetes.client..")
                    .and(not(name("io.fabric8.kubernetes.client.CustomResource"))));

    @ArchTest
    static final ArchRule configurationReachesNoReconciler = noClasses()
            .that()
            .resideInAPackage("dev.ebb.operator.config..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage("dev.ebb.operator.reconcile..");
}
