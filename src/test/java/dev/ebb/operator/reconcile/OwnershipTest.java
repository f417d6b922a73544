package dev.ebb.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class OwnershipTest {
    private static OwnerReference owner(String kind, String name, String uid, Boolean controller) {
        return new OwnerReferenceBuilder()
                .withApiVersion("serving.ebb.dev/v1alpha1")
                .withKind(kind)
                .withName(name)
                .withUid(uid)
                .withController(controller)
                .build();
    }

    private static Service service(OwnerReference... owners) {
        return new ServiceBuilder()
                .withNewMetadata()
                .withName("a-b-c")
                .withOwnerReferences(List.of(owners))
                .endMetadata()
                .build();
    }

    static Stream<Arguments> holders() {
        return Stream.of(
                Arguments.of("ours, by uid", service(owner("ModelDeployment", "a", "uid-a", true)), Optional.empty()),
                Arguments.of(
                        "ours among others",
                        service(owner("Thing", "x", "uid-x", false), owner("ModelDeployment", "a", "uid-a", true)),
                        Optional.empty()),
                Arguments.of(
                        "another ModelDeployment",
                        service(owner("ModelDeployment", "a-b", "uid-ab", true)),
                        Optional.of("Service a-b-c belongs to ModelDeployment a-b")),
                Arguments.of(
                        "one of the same name, recreated",
                        service(owner("ModelDeployment", "a", "uid-old", true)),
                        Optional.of("Service a-b-c belongs to ModelDeployment a")),
                Arguments.of(
                        "the controller is named first",
                        service(owner("Thing", "x", "uid-x", false), owner("ModelDeployment", "a-b", "uid-ab", true)),
                        Optional.of("Service a-b-c belongs to ModelDeployment a-b")),
                Arguments.of(
                        "nobody's",
                        service(),
                        Optional.of("Service a-b-c belongs to no owner (it was not created by a ModelDeployment)")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("holders")
    void anObjectIsOursOnlyWhenAnOwnerReferenceCarriesOurUid(String name, Service existing, Optional<String> conflict) {
        assertThat(Ownership.conflict(existing, "uid-a").map(Ownership.Conflict::sentence))
                .isEqualTo(conflict);
        assertThat(Ownership.ours(existing, "uid-a")).isEqualTo(conflict.isEmpty());
    }
}
