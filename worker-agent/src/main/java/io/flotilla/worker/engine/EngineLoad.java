package io.flotilla.worker.engine;

/**
 * An engine's load at one moment.
 *
 * @param running              sequences scheduled in the running batch
 * @param waiting              sequences queued for admission (including preempted ones)
 * @param waitingPrefillTokens tokens still to prefill: the full length of every waiting sequence
 *                             plus the unprefilled rest of running sequences still in prefill
 * @param activeKvBlocks       KV blocks referenced by at least one sequence
 * @param totalKvBlocks        KV blocks in the engine
 * @param lastStepMs           duration of the last executed step in milliseconds (0 before any)
 */
public record EngineLoad(int running, int waiting, long waitingPrefillTokens, int activeKvBlocks,
                         int totalKvBlocks, double lastStepMs) {

    /** Requests accepted and not yet finished. */
    public int inFlight() {
        return running + waiting;
    }

    /** Fraction of KV blocks referenced by sequences, in [0, 1]. */
    public double kvUsage() {
        return totalKvBlocks == 0 ? 0 : (double) activeKvBlocks / totalKvBlocks;
    }
}
