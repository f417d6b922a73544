package dev.ebb.operator.observe;

import dev.ebb.operator.api.v1alpha1.RoleStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.ToIntFunction;
import java.util.stream.IntStream;

/**
 * ebb_replicas{namespace,deployment,role,state}: each role's replicas as the last status said, per state. A status
 * touches only its own deployment's gauges: registering every deployment's rows again on each reconcile cost the
 * packaged operator most of its CPU at 500 ModelDeployments.
 */
@ApplicationScoped
public class ReplicaGauges {
    private record State(String name, ToIntFunction<RoleStatus> of) {}

    private static final List<State> STATES = List.of(
            new State("desired", RoleStatus::desired),
            new State("current", RoleStatus::current),
            new State("ready", RoleStatus::ready),
            new State("updated", RoleStatus::updated));

    private final MeterRegistry registry;
    /** Per deployment (namespace, name), its roles' gauges by role name. */
    private final Map<List<String>, Map<String, RoleGauges>> byDeployment = new ConcurrentHashMap<>();

    /** One role's four values and the gauges that read them. */
    private record RoleGauges(AtomicIntegerArray values, List<Meter> meters) {
        void set(RoleStatus role) {
            for (int i = 0; i < STATES.size(); i++) {
                values.set(i, STATES.get(i).of().applyAsInt(role));
            }
        }
    }

    public ReplicaGauges(MeterRegistry registry) {
        this.registry = registry;
    }

    public void record(String namespace, String deployment, List<RoleStatus> roles) {
        byDeployment.compute(List.of(namespace, deployment), (key, before) -> {
            Map<String, RoleGauges> kept = before == null ? new HashMap<>() : new HashMap<>(before);
            Map<String, RoleGauges> now = new HashMap<>();
            for (RoleStatus role : roles) {
                RoleGauges gauges = kept.containsKey(role.name())
                        ? kept.remove(role.name())
                        : register(namespace, deployment, role.name());
                gauges.set(role);
                now.put(role.name(), gauges);
            }
            kept.values().forEach(this::remove);
            return Map.copyOf(now);
        });
    }

    public void forget(String namespace, String deployment) {
        byDeployment.computeIfPresent(List.of(namespace, deployment), (key, before) -> {
            before.values().forEach(this::remove);
            return null;
        });
    }

    private RoleGauges register(String namespace, String deployment, String role) {
        AtomicIntegerArray values = new AtomicIntegerArray(STATES.size());
        Tags tags = Tags.of(Metrics.NAMESPACE, namespace, Metrics.DEPLOYMENT, deployment, Metrics.ROLE, role);
        List<Meter> meters = IntStream.range(0, STATES.size())
                .<Meter>mapToObj(i -> Gauge.builder(Metrics.REPLICAS, values, v -> v.get(i))
                        .description("replicas of each role, by state")
                        .tags(tags.and(Metrics.STATE, STATES.get(i).name()))
                        .strongReference(true)
                        .register(registry))
                .toList();
        return new RoleGauges(values, meters);
    }

    private void remove(RoleGauges gauges) {
        gauges.meters().forEach(registry::remove);
    }
}
