package io.flotilla.gateway.output;

import java.util.List;

/**
 * One generated token's log-probability as the client sees it: the token's text (its bytes decoded,
 * lossily when they are part of a character), its bytes, and the most likely alternatives.
 *
 * @param bytes null when the tokenizer has no bytes for the id
 */
public record TokenLogprob(String token, byte[] bytes, float logprob, List<Alternative> top) {

    public record Alternative(String token, byte[] bytes, float logprob) {
    }
}
