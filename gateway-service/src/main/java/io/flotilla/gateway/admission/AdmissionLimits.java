package io.flotilla.gateway.admission;

import java.time.Duration;

/**
 * Admission limits of one model.
 *
 * @param maxInFlight  requests running at once
 * @param maxQueued    requests waiting for a slot; 0 means no waiting
 * @param queueTimeout longest wait for a slot
 */
public record AdmissionLimits(int maxInFlight, int maxQueued, Duration queueTimeout) {

    public AdmissionLimits {
        if (maxInFlight < 1 || maxQueued < 0 || queueTimeout.isNegative()) {
            throw new IllegalArgumentException("invalid admission limits " + maxInFlight + "/" + maxQueued + "/" + queueTimeout);
        }
    }
}
