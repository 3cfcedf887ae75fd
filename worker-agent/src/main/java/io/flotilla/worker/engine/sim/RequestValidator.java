package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.SamplingOptions;

/** Checks that a request can ever run on an engine with a given config; stateless. */
final class RequestValidator {

    private RequestValidator() {
    }

    /** @throws InvalidRequestException naming the first problem found */
    static void validate(EngineRequest r, SimEngineConfig config) {
        if (r.requestId().isBlank()) {
            throw new InvalidRequestException("request id must not be blank");
        }
        int[] prompt = r.promptTokens();
        if (prompt.length == 0) {
            throw new InvalidRequestException("prompt of " + r.requestId() + " is empty");
        }
        if (r.maxTokens() < 1) {
            throw new InvalidRequestException("max tokens must be at least 1, got " + r.maxTokens());
        }
        long total = (long) prompt.length + r.maxTokens();
        if (total > config.maxContextTokens()) {
            throw new InvalidRequestException("prompt (" + prompt.length + " tokens) plus max tokens (" + r.maxTokens()
                    + ") exceeds the context limit of " + config.maxContextTokens() + " tokens");
        }
        if (total > config.capacityTokens()) {
            throw new InvalidRequestException("prompt plus max tokens (" + total + ") exceeds the KV pool of "
                    + config.capacityTokens() + " tokens");
        }
        checkTokens("prompt token", prompt, config.vocabSize());
        checkTokens("stop token id", r.stopTokenIds(), config.vocabSize());
        if (r.temperature() != null && (!Double.isFinite(r.temperature()) || r.temperature() < 0)) {
            throw new InvalidRequestException("temperature must be a finite number >= 0, got " + r.temperature());
        }
        SamplingOptions o = r.options();
        for (int id : o.logitBias().keySet()) {
            if (id < 0 || id >= config.vocabSize()) {
                throw new InvalidRequestException("logit_bias names token " + Integer.toUnsignedString(id)
                        + ", outside the vocabulary [0, " + config.vocabSize() + ")");
            }
        }
        if (o.topLogprobs() < 0 || o.topLogprobs() > SimReplies.MAX_TOP_LOGPROBS) {
            throw new InvalidRequestException("top_logprobs must be in [0, " + SimReplies.MAX_TOP_LOGPROBS + "], got "
                    + o.topLogprobs());
        }
        if ((o.topK() != null && o.topK() < -1) || !(o.effectiveMinP() >= 0 && o.effectiveMinP() <= 1)
                || !(o.effectiveTopP() > 0 && o.effectiveTopP() <= 1) || !(o.effectiveRepetitionPenalty() > 0)
                || !Double.isFinite(o.effectivePresencePenalty() + o.effectiveFrequencyPenalty())) {
            throw new InvalidRequestException("sampling parameters out of range: " + o);
        }
    }

    private static void checkTokens(String what, int[] tokens, int vocabSize) {
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] < 0 || tokens[i] >= vocabSize) {
                throw new InvalidRequestException(what + " at index " + i + " is " + tokens[i]
                        + ", outside the vocabulary [0, " + vocabSize + ")");
            }
        }
    }
}
