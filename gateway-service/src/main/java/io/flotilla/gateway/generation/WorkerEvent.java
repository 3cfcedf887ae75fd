package io.flotilla.gateway.generation;

import io.flotilla.protocol.v1.FinishReason;

/** What the request path relays from the workers, whichever worker produced it. */
public sealed interface WorkerEvent {

    /** Newly generated token ids, in order. */
    record Tokens(int[] ids) implements WorkerEvent {
    }

    /** Generation ended normally: {@code LENGTH} (max tokens) or {@code STOP} (eos or a stop token). */
    record Finished(FinishReason reason) implements WorkerEvent {
    }
}
