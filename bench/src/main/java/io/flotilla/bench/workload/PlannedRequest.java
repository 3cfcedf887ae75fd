package io.flotilla.bench.workload;

/**
 * A request a workload wants sent.
 *
 * @param arrivalMs for an open-loop arrival, milliseconds of workload time after the start (the load
 *                  generator divides by {@code --speedup}); for a follow-up turn, ignored
 * @param prompt    token ids, produced at send time
 * @param maxTokens tokens to generate ({@code max_tokens}, with {@code ignore_eos})
 * @param session   session id for multi-turn workloads, {@code -1} otherwise
 * @param turn      0-based turn within the session, 0 otherwise
 */
public record PlannedRequest(double arrivalMs, Prompt prompt, int maxTokens, long session, int turn) {

    public PlannedRequest {
        if (maxTokens < 1) {
            throw new IllegalArgumentException("max_tokens must be at least 1, got " + maxTokens);
        }
    }

    public static PlannedRequest single(double arrivalMs, Prompt prompt, int maxTokens) {
        return new PlannedRequest(arrivalMs, prompt, maxTokens, -1, 0);
    }
}
