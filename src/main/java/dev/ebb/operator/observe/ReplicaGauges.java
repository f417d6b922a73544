package dev.ebb.operator.observe;

import dev.ebb.operator.api.v1alpha1.RoleStatus;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** ebb_replicas{namespace,deployment,role,state}: each role's replicas as the last status said, per state. */
@ApplicationScoped
public class ReplicaGauges {
    private final MultiGauge gauge;
    private final Map<List<String>, List<RoleStatus>> byDeployment = new ConcurrentHashMap<>();

    public ReplicaGauges(MeterRegistry registry) {
        this.gauge = MultiGauge.builder(Metrics.REPLICAS).description("replicas of each role, by state").register(registry);
    }

    public void record(String namespace, String deployment, List<RoleStatus> roles) {
        byDeployment.put(List.of(namespace, deployment), List.copyOf(roles));
        publish();
    }

    public void forget(String namespace, String deployment) {
        byDeployment.remove(List.of(namespace, deployment));
        publish();
    }

    /** All deployments' rows at once: a row left out is a series that goes away. */
    private synchronized void publish() {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        byDeployment.forEach((key, roles) -> roles.forEach(role -> {
            Tags tags = Tags.of(Metrics.NAMESPACE, key.get(0), Metrics.DEPLOYMENT, key.get(1), Metrics.ROLE, role.name());
            rows.add(MultiGauge.Row.of(tags.and(Metrics.STATE, "desired"), role.desired()));
            rows.add(MultiGauge.Row.of(tags.and(Metrics.STATE, "current"), role.current()));
            rows.add(MultiGauge.Row.of(tags.and(Metrics.STATE, "ready"), role.ready()));
            rows.add(MultiGauge.Row.of(tags.and(Metrics.STATE, "updated"), role.updated()));
        }));
        gauge.register(rows, true);
    }
}
