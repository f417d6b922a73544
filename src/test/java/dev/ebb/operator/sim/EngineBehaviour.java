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
    volatile Duration gaugeWriteDelay = Duration.ZERO;
    volatile Duration idleWriteAfter = Duration.ZERO;
    volatile Duration exitAfterDrain = Duration.ZERO;
    volatile Duration drainCheckEvery = Duration.ZERO;
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
        return new EngineBehaviour(
                engine == Engine.VLLM ? SigtermConduct.ABORT : SigtermConduct.DRAIN_WITHOUT_BOUND,
                MetricsPage.gaugesOf(engine, Optional.empty()));
    }

    /** The engine a container runs, its release read from the image's tag and its shutdown flags from the command. */
    public static EngineBehaviour ofContainer(Engine engine, String image, List<String> command) {
        return new EngineBehaviour(
                SigtermConduct.of(engine, image, command), MetricsPage.gaugesOf(engine, EngineRelease.of(image)));
    }

    public SigtermConduct sigtermConduct() {
        return onSigterm;
    }

    public Duration loadDelay() {
        return loadDelay;
    }

    public EngineBehaviour onSigterm(SigtermConduct conduct) {
        onSigterm = conduct;
        return this;
    }
    /** Until the model is loaded the engine answers no request: vLLM refuses connections, SGLang answers 503. */
    public EngineBehaviour loadDelay(Duration delay) {
        loadDelay = delay;
        return this;
    }
    /** The in-flight gauges show what the engine held at the last write of a logger that runs this often. */
    public EngineBehaviour busyGaugeLag(Duration lag) {
        busyGaugeLag = lag;
        return this;
    }
    /** Spreads the requests' data-parallel groups over this many members; see {@link #dataParallelMembers}. */
    public EngineBehaviour dataParallelMembers(int members) {
        dataParallelMembers = Math.max(1, members);
        return this;
    }
    /** A request is held over HTTP this long before any in-flight gauge counts it. */
    public EngineBehaviour tokenizing(Duration delay) {
        tokenizing = delay;
        return this;
    }
    /** While the engine holds requests, its page shows each change this long after it happens. */
    public EngineBehaviour gaugeWriteDelay(Duration delay) {
        gaugeWriteDelay = delay;
        return this;
    }
    /** Once the engine holds nothing, its page still shows what it last held until this long after. */
    public EngineBehaviour idleWriteAfter(Duration after) {
        idleWriteAfter = after;
        return this;
    }
    /** Once its drain has found nothing left, the engine takes this long to stop its processes and exit. */
    public EngineBehaviour exitAfterDrain(Duration teardown) {
        exitAfterDrain = teardown;
        return this;
    }
    /** The engine looks whether its drain is over only this often, on a beat counted from its start. */
    public EngineBehaviour drainCheckEvery(Duration period) {
        drainCheckEvery = period;
        return this;
    }

    /**
     * The engine's timings as the engine tier saw the released engines keep them on CPU, slower than the fakes'
     * defaults, which keep the suites fast. Loading is left out: 44 to 101 s (vLLM 0.32.0) and 28 to 32 s (SGLang
     * 0.5.15) for the tiny model; {@link #loadDelay} sets one.
     * <ul>
     * <li>vLLM 0.32.0: its gauges follow a request within 25 ms once it is tokenized ({@link #tokenizing} sets a long
     * prompt's time); it exited 4 to 7.6 s after its last stream ended, as its API server and engine core stopped in
     * turn (RealVllmSigtermIT, RealEngineRetirementIT).
     * <li>SGLang 0.5.15: a request showed 1.2 to 1.8 s after it was sent, and a finished one left the page 29.3 to
     * 29.7 s after its end, at the idle scheduler's 30 s write (RealSglangIT); it exited 4.5 to 9.3 s after its last
     * stream, as its SIGTERM watchdog looks every 5 s whether requests are left
     * (python/sglang/srt/managers/tokenizer_manager.py, sigterm_watchdog) and its schedulers then took about 4.4 s to
     * stop (RealSglangSigtermIT).
     * </ul>
     */
    public EngineBehaviour timedAsObserved(Engine engine) {
        return switch (engine) {
            case VLLM -> exitAfterDrain(Duration.ofSeconds(6));
            case SGLANG ->
                gaugeWriteDelay(Duration.ofMillis(1_500))
                        .idleWriteAfter(Duration.ofMillis(29_500))
                        .exitAfterDrain(Duration.ofMillis(4_400))
                        .drainCheckEvery(Duration.ofSeconds(5));
        };
    }
}
