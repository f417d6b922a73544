package dev.ebb.operator.sim;

import java.time.Duration;

/** Ways a fake engine's /metrics page can misbehave; each can be switched at any time. */
public final class EngineFaults {
    volatile Duration metricsDelay = Duration.ZERO;
    volatile int metricsStatus = 200;
    volatile String missingGauge;
    volatile int paddingBytes;
    volatile boolean notMetrics;
    volatile Duration trickle = Duration.ZERO;

    public EngineFaults slowMetrics(Duration delay) {
        metricsDelay = delay;
        return this;
    }

    public EngineFaults metricsStatus(int status) {
        metricsStatus = status;
        return this;
    }

    public EngineFaults missingGauge(String gauge) {
        missingGauge = gauge;
        return this;
    }
    /** Pads the page with comment lines until it is at least this big. */
    public EngineFaults oversizedMetrics(int bytes) {
        paddingBytes = bytes;
        return this;
    }

    public EngineFaults notMetrics(boolean value) {
        notMetrics = value;
        return this;
    }
    /** Sends the page one byte per {@code perByte}: every socket read gets data in time, the whole page never does. */
    public EngineFaults trickleMetrics(Duration perByte) {
        trickle = perByte;
        return this;
    }
}
