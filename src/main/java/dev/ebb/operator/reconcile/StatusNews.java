package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.Annotations;
import dev.ebb.operator.api.v1alpha1.ModelDeploymentStatus;
import dev.ebb.operator.api.v1alpha1.RoleStatus;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/** Which Events a change of status deserves. Pure: the reconciler only writes what this returns. */
public final class StatusNews {
    public static final String REASON_REFRESH_STARTED = "HooksRefreshStarted";
    public static final String REASON_REFRESHED = "HooksRefreshed";

    /** One Event to write on the ModelDeployment. */
    public record News(boolean warning, String reason, String message) {}

    private StatusNews() {}

    /** A deployment whose retirements were never blocked has nothing to be told about it. */
    private static boolean quietlyUnblocked(List<Condition> previous, Condition condition) {
        return Conditions.RETIREMENT_BLOCKED.equals(condition.getType())
                && !"True".equals(condition.getStatus())
                && previous.stream()
                        .noneMatch(
                                c -> Conditions.RETIREMENT_BLOCKED.equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** Reasons that ask a person to act, whenever they come. */
    private static final Set<String> ATTENTION = Set.of(
            StatusAggregator.REASON_REPLICAS_FAILING,
            StatusAggregator.REASON_NAME_CONFLICT,
            StatusAggregator.REASON_INVALID_SPEC,
            StatusAggregator.REASON_BLOCKED);

    /**
     * A Warning for what asks a person to act: a failing replica, a name conflict, an invalid spec, a blocked
     * retirement, a router that was available and no longer is. Every other change is the operator at work (replicas
     * created, a scale-down or a rollout under way, a router still starting, a block lifted) and is told as Normal.
     */
    private static boolean asksForAttention(List<Condition> previous, Condition condition) {
        if (ATTENTION.contains(condition.getReason())) {
            return true;
        }
        return StatusAggregator.REASON_ROUTER_NOT_READY.equals(condition.getReason())
                && previous.stream()
                        .anyMatch(c -> Conditions.ROUTER_READY.equals(c.getType()) && "True".equals(c.getStatus()));
    }

    public static List<News> between(ModelDeploymentStatus before, ModelDeploymentStatus after) {
        List<News> news = new ArrayList<>();
        List<Condition> previous = before == null || before.conditions() == null ? List.of() : before.conditions();
        Set<String> told = new HashSet<>();
        // one Event per reason, so that a cause shared by several conditions is told once; a retirement, a move off a
        // node among them, tells its own transitions and holds as they happen
        for (Condition condition : after.conditions()) {
            if (Conditions.RETIREMENT_PROGRESSING.equals(condition.getType())
                    || Conditions.NODE_MAINTENANCE.equals(condition.getType())
                    || quietlyUnblocked(previous, condition)) {
                continue;
            }
            if (Conditions.changed(previous, condition) && told.add(condition.getReason())) {
                news.add(new News(
                        asksForAttention(previous, condition),
                        condition.getReason(),
                        condition.getType() + "=" + condition.getStatus() + ": " + condition.getMessage()));
            }
        }
        // each drain warning is told once, when it first applies to a role
        Set<String> known = new HashSet<>();
        if (before != null && before.roles() != null) {
            before.roles().stream()
                    .filter(r -> r.drain() != null)
                    .forEach(r -> r.drain().warnings().forEach(w -> known.add(r.name() + "/" + w.reason())));
        }
        for (RoleStatus role : after.roles()) {
            role.drain().warnings().stream()
                    .filter(w -> !known.contains(role.name() + "/" + w.reason()))
                    .forEach(w -> news.add(new News(true, w.reason(), "role " + role.name() + ": " + w.message())));
        }
        refreshNews(before, after, news);
        return List.copyOf(news);
    }

    /** A refresh is told when it starts, with what it replaces, and when it is done. */
    private static void refreshNews(ModelDeploymentStatus before, ModelDeploymentStatus after, List<News> news) {
        String refreshingBefore = before == null ? null : before.hooksRefreshing();
        String refreshedBefore = before == null ? null : before.hooksRefreshedFor();
        if (HooksRefresh.changed(refreshingBefore, after.hooksRefreshing())) {
            String behind = after.roles().stream()
                    .filter(r -> r.hookOutdated() + r.imageOutdated() > 0)
                    .map(r -> "role " + r.name() + " has " + r.hookOutdated() + " Pod(s) with an older drain hook and "
                            + r.imageOutdated() + " with an older default image")
                    .collect(Collectors.joining("; "));
            news.add(new News(
                    false,
                    REASON_REFRESH_STARTED,
                    Annotations.REFRESH_HOOKS + "=" + after.hooksRefreshing() + ": "
                            + (behind.isEmpty() ? "waiting for every role's replicas to be Ready" : behind)
                            + "; their replicas are replaced one at a time through the retirement protocol"));
        }
        if (HooksRefresh.changed(refreshedBefore, after.hooksRefreshedFor())) {
            news.add(
                    new News(
                            false,
                            REASON_REFRESHED,
                            Annotations.REFRESH_HOOKS + "=" + after.hooksRefreshedFor()
                                    + ": every replica carries this operator's drain hook and default images, and every role is Ready"));
        }
    }
}
