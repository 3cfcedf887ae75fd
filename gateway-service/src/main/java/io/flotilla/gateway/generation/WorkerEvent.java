package io.flotilla.gateway.generation;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.TokenLogprobs;

import java.util.List;

/** What the request path relays from the workers, whichever worker produced it. */
public sealed interface WorkerEvent {

    /**
     * Newly generated token ids of one choice, in order.
     *
     * @param logprobs one per id when the request asked for log-probabilities, else empty
     */
    record Tokens(int choice, int[] ids, List<TokenLogprobs> logprobs) implements WorkerEvent {

        public Tokens(int[] ids) {
            this(0, ids, List.of());
        }
    }

    /** A choice ended normally: {@code LENGTH} (max tokens) or {@code STOP} (eos or a stop token). */
    record Finished(int choice, FinishReason reason) implements WorkerEvent {

        public Finished(FinishReason reason) {
            this(0, reason);
        }
    }
}
