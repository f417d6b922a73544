package dev.ebb.operator.sim;

import dev.ebb.operator.api.EngineRelease;
import dev.ebb.operator.api.v1alpha1.Engine;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * How one fake engine behaves where released engines differ from an ideal one: what SIGTERM does, how long the model
 * takes to load, how far its gauges lag behind the requests it holds. Each can be switched at any time; the load delay
 * counts only when the engine starts.
 */
public final class EngineBehaviour {
    volatile SigtermConduct onSigterm;
    volatile Duration loadDelay = Duration.ZERO;
    volatile Duration busyGaugeLag = Duration.ZERO;
    volatile Duration tokenizing = Duration.ZERO;
    /**
     * How many members the engine's data-parallel groups are spread over: request i runs on member i mod this, and
     * the engine's own page counts only member 0's. 1 for an engine whose page counts every request.
     */
    volatile int dataParallelMembers = 1;
    /** The in-flight gauges' names on its page, as its release names them. */
    final List<String> gauges;

    private EngineBehaviour(SigtermConduct onSigterm, List<String> gauges) {
        this.onSigterm = onSigterm;
        this.gauges = gauges;
    }

    /** The engine as a release of unknown tag runs it: vLLM before graceful shutdown aborts, SGLang drains. */
    public static EngineBehaviour of(Engine engine) {
        return new EngineBehaviour(engine == Engine.VLLM ? SigtermConduct.ABORT : SigtermConduct.DRAIN_WITHOUT_BOUND,
                MetricsPage.gaugesOf(engine, Optional.empty()));
    }

    /** The engine a container runs, its release read from the image's tag and its shutdown flags from the command. */
    public static EngineBehaviour ofContainer(Engine engine, String image, List<String> command) {
        return new EngineBehaviour(SigtermConduct.of(engine, image, command), MetricsPage.gaugesOf(engine, EngineRelease.of(image)));
    }

    public SigtermConduct sigtermConduct() { return onSigterm; }
    public Duration loadDelay() { return loadDelay; }

    public EngineBehaviour onSigterm(SigtermConduct conduct) { onSigterm = conduct; return this; }
    /** Until the model is loaded the engine answers no request: vLLM refuses connections, SGLang answers 503. */
    public EngineBehaviour loadDelay(Duration delay) { loadDelay = delay; return this; }
    /** The in-flight gauges show what the engine held at the last write of a logger that runs this often. */
    public EngineBehaviour busyGaugeLag(Duration lag) { busyGaugeLag = lag; return this; }
    /** Spreads the requests' data-parallel groups over this many members; see {@link #dataParallelMembers}. */
    public EngineBehaviour dataParallelMembers(int members) { dataParallelMembers = Math.max(1, members); return this; }
    /** A request is held over HTTP this long before any in-flight gauge counts it. */
    public EngineBehaviour tokenizing(Duration delay) { tokenizing = delay; return this; }
}
