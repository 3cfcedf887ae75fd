package io.flotilla.gateway.output;

import io.flotilla.protocol.v1.TokenLogprobs;
import io.flotilla.protocol.v1.FinishReason;

import java.util.List;

/**
 * What the output reads of a generation, as the pipeline reports each attempt's progress: every attempt event
 * is one, and only {@link Tokens} and {@link Finished} make output (routing and migration make none). Declared
 * here, by its reader, so that the output does not depend on the pipeline that writes it.
 */
public interface GenerationEvent {

    /** Newly generated token ids of one choice, with their log-probabilities when the request asked for them. */
    interface Tokens extends GenerationEvent {
        int choice();

        int[] ids();

        List<TokenLogprobs> logprobs();
    }

    /** One choice ended normally: {@code LENGTH} (max tokens) or {@code STOP} (eos, a stop token or string). */
    interface Finished extends GenerationEvent {
        int choice();

        FinishReason reason();
    }
}
