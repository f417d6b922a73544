package dev.ebb.operator.retire;

/** Where a retirement stands. */
public enum RetirementState {
    Withdrawing,
    Draining,
    Deleting,
    Settling,
    Completed,
    Aborted;

    /** Nothing may be deleted after these: the replica has already been deleted, or must be kept. */
    public boolean pastDeletion() {
        return this == Deleting || this == Settling || this == Completed;
    }

    public boolean ended() {
        return this == Completed || this == Aborted;
    }
}
