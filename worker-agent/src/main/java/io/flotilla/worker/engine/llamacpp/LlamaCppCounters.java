package io.flotilla.worker.engine.llamacpp;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the llama.cpp engine counted since it started: prompt tokens, the reuse its cache mirror predicted and the
 * engine reported, the checks between the two, tokens generated and streamed chunks whose ids were inferred.
 */
public final class LlamaCppCounters {

    final AtomicLong promptTokens = new AtomicLong();
    final AtomicLong predictedReused = new AtomicLong();
    final AtomicLong engineReused = new AtomicLong();
    final AtomicLong evaluated = new AtomicLong();
    final AtomicLong agree = new AtomicLong();
    final AtomicLong disagree = new AtomicLong();
    final AtomicLong unchecked = new AtomicLong();
    final AtomicLong generated = new AtomicLong();
    final AtomicLong inexactChunks = new AtomicLong();

    /** Prompt tokens of every request started. */
    public long promptTokens() {
        return promptTokens.get();
    }

    /** Prompt tokens the cache mirror predicted the engine would reuse. */
    public long predictedReused() {
        return predictedReused.get();
    }

    /** Prompt tokens the engine said it reused (requests whose count was read). */
    public long engineReused() {
        return engineReused.get();
    }

    /** Prompt tokens the engine said it evaluated (requests whose count was read). */
    public long evaluated() {
        return evaluated.get();
    }

    /** Requests whose engine count equalled the mirror's prediction. */
    public long agree() {
        return agree.get();
    }

    /** Requests whose engine count differed from the mirror's prediction. */
    public long disagree() {
        return disagree.get();
    }

    /** Requests whose engine count could not be read. */
    public long unchecked() {
        return unchecked.get();
    }

    public long generated() {
        return generated.get();
    }

    /** Streamed chunks of several tokens (or a control token mid-stream) whose ids were inferred from their bytes. */
    public long inexactChunks() {
        return inexactChunks.get();
    }
}
