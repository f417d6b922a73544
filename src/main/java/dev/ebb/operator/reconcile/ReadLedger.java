package dev.ebb.operator.reconcile;

import dev.ebb.operator.api.v1alpha1.Engine;
import dev.ebb.operator.api.v1alpha1.ModelDeployment;
import dev.ebb.operator.read.MemberReader;
import dev.ebb.operator.read.MemberWork;
import dev.ebb.operator.read.Reading;
import dev.ebb.operator.retire.Retirement;
import io.fabric8.kubernetes.api.model.Pod;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Member reads run in the background between passes: a pass starts them and a later pass collects what finished.
 * A member whose read is still running gets no second one, so a slow engine is never read twice at once. Reads are
 * filed under the operation that asked for them, so a read that lands late never counts for a later operation.
 */
@ApplicationScoped
public class ReadLedger {
    /**
     * One operation of one deployment that reads members: a retirement, or a round of candidate reads.
     *
     * @param id tells the deployment's operations apart, those that began in the same pass included
     */
    public record Operation(String deployment, String id) {
        /** A retirement's reads. Retirements that begin in the same pass share their start: the replica tells them apart. */
        static Operation of(ModelDeployment md, Retirement retirement) {
            return new Operation(
                    md.getMetadata().getUid(),
                    retirement.role() + "/" + retirement.ordinal() + "@" + retirement.startedAt());
        }
    }

    private record Key(Operation operation, String member) {}

    private final MemberReader reader;
    private final Map<Key, MemberWork> finished = new ConcurrentHashMap<>();
    private final Set<Key> running = ConcurrentHashMap.newKeySet();

    public ReadLedger(MemberReader reader) {
        this.reader = reader;
    }

    /** @param connectionPort where to read the connection table too, for a member clients reach without a router */
    public void start(Operation operation, Pod member, Engine engine, Optional<Integer> connectionPort) {
        Key key = new Key(operation, member.getMetadata().getName());
        if (!running.add(key)) {
            return;
        }
        reader.readWork(member, engine, connectionPort)
                .subscribe()
                .with(
                        work -> land(key, work),
                        failure -> land(
                                key, MemberWork.gaugesOnly(new Reading.Failed(String.valueOf(failure.getMessage())))));
    }

    /** A read lands only while its operation is still known: one that ended meanwhile never hears of it. */
    private void land(Key key, MemberWork work) {
        if (running.remove(key)) {
            finished.put(key, work);
        }
    }

    /**
     * The reads for this operation that finished since the last call, each handed out once. Reads of the deployment's
     * other operations stay for them: several retirements of one deployment read their members at the same time.
     */
    public Map<String, MemberWork> collect(Operation operation) {
        Map<String, MemberWork> out = new HashMap<>();
        for (Key key : finished.keySet()) {
            if (key.operation().equals(operation)) {
                MemberWork work = finished.remove(key);
                if (work != null) {
                    out.put(key.member(), work);
                }
            }
        }
        return out;
    }

    /** The operation ended: what it read, or is still reading, is dropped. */
    public void forget(Operation operation) {
        running.removeIf(key -> key.operation().equals(operation));
        finished.keySet().removeIf(key -> key.operation().equals(operation));
    }

    /** The deployment is gone: nothing read for it matters any more. */
    public void forget(String deployment) {
        running.removeIf(key -> key.operation().deployment().equals(deployment));
        finished.keySet().removeIf(key -> key.operation().deployment().equals(deployment));
    }
}
