package dev.ebb.operator.retire;

import dev.ebb.operator.api.v1alpha1.Engine;
import java.util.List;

/** What a replica, as it was deployed, allows the protocol to do. */
public sealed interface Classification {
    /** These members' reads speak for the whole replica, which runs this engine. */
    record Answerable(Engine engine, List<String> answering) implements Classification {
    }

    /** Nothing can be read from the replica; it is held until the budgets run out. */
    record Held(String reason, String message) implements Classification {
    }

    /** The protocol never deletes this replica. */
    record Refused(String reason, String message) implements Classification {
    }
}
