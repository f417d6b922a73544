package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.read.Reading;
import io.fabric8.kubernetes.api.model.Pod;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Member reads run in the background between passes: a pass starts them and a later pass collects what finished.
 * A member whose read is still running gets no second one, so a slow engine is never read twice at once. Reads are
 * filed under the operation that asked for them, so a read that lands late never counts for a later operation.
 */
@ApplicationScoped
public class ReadLedger {
    /** One retirement of one deployment. */
    public record Operation(String deployment, String startedAt) {
    }

    private record Key(Operation operation, String member) {
    }

    private final MemberReader reader;
    private final Map<Key, Reading> finished = new ConcurrentHashMap<>();
    private final Set<Key> running = ConcurrentHashMap.newKeySet();

    public ReadLedger(MemberReader reader) {
        this.reader = reader;
    }

    public void start(Operation operation, Pod member, Engine engine) {
        Key key = new Key(operation, member.getMetadata().getName());
        if (!running.add(key)) {
            return;
        }
        reader.read(member, engine).subscribe().with(
                reading -> land(key, reading),
                failure -> land(key, new Reading.Failed(String.valueOf(failure.getMessage()))));
    }

    private void land(Key key, Reading reading) {
        finished.put(key, reading);
        running.remove(key);
    }

    /** The reads for this operation that finished since the last call, each handed out once; older ones are dropped. */
    public Map<String, Reading> collect(Operation operation) {
        Map<String, Reading> out = new HashMap<>();
        for (Key key : finished.keySet()) {
            if (!key.operation().deployment().equals(operation.deployment())) {
                continue;
            }
            Reading reading = finished.remove(key);
            if (reading != null && key.operation().equals(operation)) {
                out.put(key.member(), reading);
            }
        }
        return out;
    }

    /** The deployment is gone: nothing read for it matters any more. */
    public void forget(String deployment) {
        finished.keySet().removeIf(key -> key.operation().deployment().equals(deployment));
    }
}
