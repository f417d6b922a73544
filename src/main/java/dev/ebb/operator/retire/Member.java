package dev.ebb.operator.retire;

/**
 * A member as the retirement saw it: bound by name and uid at the start, and the identity of its engine
 * container then, so that a restart since can be told.
 */
public record Member(String name, String uid, String containerId) {}
