package dev.ebb.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Whose an existing object is, by its owner references' UIDs: names of different ModelDeployments can render alike
 * (`a` with role `b-c` and `a-b` with role `c` both name a Service `a-b-c`), so a name says nothing about the owner.
 * Pure.
 */
public final class Ownership {
    private Ownership() {}

    /** An object a ModelDeployment would write under a name someone else's object already holds. */
    public record Conflict(String kind, String name, String holder) {
        public String sentence() {
            return kind + " " + name + " belongs to " + holder;
        }
    }

    public static boolean ours(HasMetadata existing, String ownerUid) {
        return references(existing).stream().anyMatch(r -> ownerUid.equals(r.getUid()));
    }

    /** Empty when the object is this owner's; otherwise the conflict, naming its holder as well as it can. */
    public static Optional<Conflict> conflict(HasMetadata existing, String ownerUid) {
        if (ours(existing, ownerUid)) {
            return Optional.empty();
        }
        String holder = references(existing).stream()
                .min(Comparator.comparing((OwnerReference r) -> !Boolean.TRUE.equals(r.getController())))
                .map(r -> r.getKind() + " " + r.getName())
                .orElse("no owner (it was not created by a ModelDeployment)");
        return Optional.of(
                new Conflict(existing.getKind(), existing.getMetadata().getName(), holder));
    }

    private static List<OwnerReference> references(HasMetadata existing) {
        List<OwnerReference> references = existing.getMetadata().getOwnerReferences();
        return references == null ? List.of() : references;
    }
}
