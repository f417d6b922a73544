package dev.ebb.operator.lifecycle;

/**
 * Asked before an action that takes traffic or a replica away: whether this operator still leads. A leader paused
 * past its Lease (a long GC pause, a frozen cgroup) resumes in the middle of a pass it began on what it saw then; by
 * then another may lead and have undone that pass's reason.
 */
public interface LeaseGuard {
    /** Always yes: for an operator that does not elect, which alone acts. */
    LeaseGuard NOT_ELECTING = before -> true;

    /**
     * @param before what is about to be done, for the log when it is dropped
     * @return whether to go on; when not, the action is dropped and this operator has stopped leading
     */
    boolean stillLeads(String before);
}
