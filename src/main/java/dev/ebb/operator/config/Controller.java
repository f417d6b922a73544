package dev.ebb.operator.config;

/** The one controller's name, under which the Java Operator SDK's extension keeps its settings. */
public final class Controller {
    public static final String NAME = "modeldeployment";

    private Controller() {}
}
