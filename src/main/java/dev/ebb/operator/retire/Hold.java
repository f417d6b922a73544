package dev.ebb.operator.retire;

/** Why a retirement does not move on this pass, and the message that tells it. */
record Hold(Reason reason, String message) {}
