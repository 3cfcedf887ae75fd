package io.flotilla.worker.engine.openai;

import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;

/**
 * Times one request for the {@link TimingLearner}: time to its first token, whether it had the engine to
 * itself until then (nothing else in flight when it was sent, nothing admitted after), and the mean time
 * between its later tokens with the engine's KV usage at the end. Called under the stream's lock.
 */
final class RequestClock {

    private final boolean aloneAtAdmission;
    private final BooleanSupplier nobodyAdmittedSince;
    private final DoubleSupplier kvUsage;
    private final TimingLearner learner;
    private final long sentNanos = System.nanoTime();
    private long firstNanos = -1;
    private long lastNanos;
    private boolean aloneAtFirstToken;

    RequestClock(boolean aloneAtAdmission, BooleanSupplier nobodyAdmittedSince, DoubleSupplier kvUsage,
                 TimingLearner learner) {
        this.aloneAtAdmission = aloneAtAdmission;
        this.nobodyAdmittedSince = nobodyAdmittedSince;
        this.kvUsage = kvUsage;
        this.learner = learner;
    }

    void tokens() {
        long now = System.nanoTime();
        if (firstNanos < 0) {
            firstNanos = now;
            aloneAtFirstToken = aloneAtAdmission && nobodyAdmittedSince.getAsBoolean();
        }
        lastNanos = now;
    }

    /** The request finished normally after {@code outputTokens}, of which the engine computed {@code computedPrompt} prompt tokens. */
    void finished(int computedPrompt, int outputTokens) {
        if (firstNanos < 0) {
            return;
        }
        double ttftMs = (firstNanos - sentNanos) / 1e6;
        double perToken = outputTokens >= 2 ? (lastNanos - firstNanos) / 1e6 / (outputTokens - 1) : 0;
        learner.accept(new TimingLearner.Sample(computedPrompt, ttftMs, aloneAtFirstToken, outputTokens, perToken,
                kvUsage.getAsDouble()));
    }
}
