package dev.ebb.operator.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The condition types the operator reports, and how a condition keeps its transition time. */
public final class Conditions {
    public static final String READY = "Ready";
    public static final String REPLICAS_UP_TO_DATE = "ReplicasUpToDate";
    public static final String RETIREMENT_PROGRESSING = "RetirementProgressing";
    public static final String RETIREMENT_BLOCKED = "RetirementBlocked";
    public static final String ROUTER_READY = "RouterReady";
    public static final String NODE_MAINTENANCE = "NodeMaintenance";

    private Conditions() {}

    /**
     * A condition as it should be written now: it keeps the previous transition time unless its status changed,
     * so that re-reconciling an unchanged world writes nothing new.
     */
    public static Condition next(
            List<Condition> previous,
            String type,
            boolean status,
            String reason,
            String message,
            long generation,
            Instant now) {
        String statusText = status ? "True" : "False";
        String since = find(previous, type)
                .filter(c -> statusText.equals(c.getStatus()))
                .map(Condition::getLastTransitionTime)
                .orElse(now.toString());
        return new ConditionBuilder()
                .withType(type)
                .withStatus(statusText)
                .withReason(reason)
                .withMessage(message)
                .withObservedGeneration(generation)
                .withLastTransitionTime(since)
                .build();
    }

    public static Optional<Condition> find(List<Condition> conditions, String type) {
        return conditions == null
                ? Optional.empty()
                : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    /** True when the condition's status, reason or message differ from what was there before. */
    public static boolean changed(List<Condition> previous, Condition now) {
        return find(previous, now.getType())
                .map(c -> !Objects.equals(c.getStatus(), now.getStatus())
                        || !Objects.equals(c.getReason(), now.getReason())
                        || !Objects.equals(c.getMessage(), now.getMessage()))
                .orElse(true);
    }
}
