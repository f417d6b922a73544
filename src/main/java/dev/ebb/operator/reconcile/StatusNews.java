package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Which Events a change of status deserves. Pure: the reconciler only writes what this returns. */
public final class StatusNews {
    /** One Event to write on the ModelDeployment. */
    public record News(boolean warning, String reason, String message) {
    }

    private StatusNews() {
    }

    /** A deployment whose retirements were never blocked has nothing to be told about it. */
    private static boolean quietlyUnblocked(List<Condition> previous, Condition condition) {
        return Conditions.RETIREMENT_BLOCKED.equals(condition.getType()) && !"True".equals(condition.getStatus())
                && previous.stream().noneMatch(c -> Conditions.RETIREMENT_BLOCKED.equals(c.getType()) && "True".equals(c.getStatus()));
    }

    public static List<News> between(ModelDeploymentStatus before, ModelDeploymentStatus after) {
        List<News> news = new ArrayList<>();
        List<Condition> previous = before == null || before.conditions() == null ? List.of() : before.conditions();
        Set<String> told = new HashSet<>();
        // one Event per reason, so that a cause shared by several conditions is told once; a retirement tells its own
        // transitions and holds as they happen
        for (Condition condition : after.conditions()) {
            if (Conditions.RETIREMENT_PROGRESSING.equals(condition.getType()) || quietlyUnblocked(previous, condition)) {
                continue;
            }
            if (Conditions.changed(previous, condition) && told.add(condition.getReason())) {
                news.add(new News(!"True".equals(condition.getStatus()), condition.getReason(),
                        condition.getType() + "=" + condition.getStatus() + ": " + condition.getMessage()));
            }
        }
        // each drain warning is told once, when it first applies to a role
        Set<String> known = new HashSet<>();
        if (before != null && before.roles() != null) {
            before.roles().stream().filter(r -> r.drain() != null)
                    .forEach(r -> r.drain().warnings().forEach(w -> known.add(r.name() + "/" + w.reason())));
        }
        for (RoleStatus role : after.roles()) {
            role.drain().warnings().stream()
                    .filter(w -> !known.contains(role.name() + "/" + w.reason()))
                    .forEach(w -> news.add(new News(true, w.reason(), "role " + role.name() + ": " + w.message())));
        }
        return List.copyOf(news);
    }
}
