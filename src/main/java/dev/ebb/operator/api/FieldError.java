package dev.ebb.operator.api;

/** A rejected value, named by its path in the resource, the way the API server names it. */
public record FieldError(String field, String message) {
    @Override
    public String toString() {
        return field + ": " + message;
    }
}
