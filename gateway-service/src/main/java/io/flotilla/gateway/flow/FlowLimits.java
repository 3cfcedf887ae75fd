package io.flotilla.gateway.flow;

import java.time.Duration;

/**
 * Flow-control limits of one model.
 *
 * @param maxInFlight  requests of the model dispatched and not finished, at most (the gateway's own
 *                     saturation signal)
 * @param maxQueued    requests waiting, at most; 0 means nothing waits
 * @param maxRouting   requests dispatched whose Route has not answered yet, at most: when capacity
 *                     returns, this many are released at once rather than the whole queue
 * @param queueTimeout longest wait of a request that does not say otherwise
 */
public record FlowLimits(int maxInFlight, int maxQueued, int maxRouting, Duration queueTimeout) {

    public FlowLimits {
        if (maxInFlight < 1 || maxQueued < 0 || maxRouting < 1 || queueTimeout.isNegative()) {
            throw new IllegalArgumentException("invalid flow limits " + maxInFlight + "/" + maxQueued + "/" + maxRouting
                    + "/" + queueTimeout);
        }
    }
}
