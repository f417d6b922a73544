package dev.ebb.operator.sim;

import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.util.function.Consumer;

/** A watch handler for whoever cares only what each object is now: an add and an update alike, a delete ignored. */
public final class EveryState {
    private EveryState() {}

    public static <T> ResourceEventHandler<T> of(Consumer<T> observe) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                observe.accept(object);
            }

            @Override
            public void onUpdate(T old, T object) {
                observe.accept(object);
            }

            @Override
            public void onDelete(T object, boolean unknown) {}
        };
    }
}
