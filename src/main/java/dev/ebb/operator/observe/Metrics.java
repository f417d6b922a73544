package dev.ebb.operator.observe;

/** The operator's own metric names, in Micrometer's dotted form; Prometheus shows them with underscores. */
public final class Metrics {
    /** ebb_member_reads_total{verdict}: member reads by what they established. */
    public static final String MEMBER_READS = "ebb.member.reads";
    /** ebb_member_read_duration_seconds: how long a member read took, exec included. */
    public static final String MEMBER_READ_DURATION = "ebb.member.read.duration";

    public static final String VERDICT = "verdict";
    /** ebb_retirements_total{outcome}: retirements that ended, by how. */
    public static final String RETIREMENTS = "ebb.retirements";
    /** ebb_retirement_duration_seconds: from the start of a retirement to its end. */
    public static final String RETIREMENT_DURATION = "ebb.retirement.duration";

    public static final String OUTCOME = "outcome";
    /** ebb_replicas{namespace,deployment,role,state}: replicas of each role by state (desired, current, ready, updated). */
    public static final String REPLICAS = "ebb.replicas";

    public static final String NAMESPACE = "namespace";
    public static final String DEPLOYMENT = "deployment";
    public static final String ROLE = "role";
    public static final String STATE = "state";

    private Metrics() {}
}
