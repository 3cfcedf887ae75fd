package io.flotilla.planner.profile;

import java.util.List;

/** Runs one point of a sweep (port: {@link ClosedLoopRunner} against a gateway, or a fake). */
public interface LoadPoint {

    /**
     * Keeps {@code concurrency} requests in flight until {@code requests} completed, each with a fresh
     * prompt of {@code promptTokens} tokens (no prefix-cache hits) generating {@code maxTokens}.
     */
    List<Measurement> run(int promptTokens, int maxTokens, int concurrency, int requests);
}
