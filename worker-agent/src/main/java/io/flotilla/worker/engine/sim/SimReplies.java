package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.SamplingOptions;

import java.util.List;

/**
 * How a simulated engine answers each request: the scripted reply of the first matching rule
 * ({@link SimScript}), else a JSON document for a structured-output request ({@link JsonSchemaSampler}),
 * else the synthetic model ({@link TokenSampler}). Structured output and text rules need the engine's
 * text side ({@link SimText}: a {@code cl100k_base} model); without it the engine does not advertise
 * JSON output and refuses it. Immutable.
 */
final class SimReplies {

    /** Most top_logprobs alternatives per token (vLLM's default max_logprobs). */
    static final int MAX_TOP_LOGPROBS = 20;
    private static final List<SamplingFeature> ALWAYS = List.of(SamplingFeature.SAMPLING_FEATURE_TOP_P,
            SamplingFeature.SAMPLING_FEATURE_TOP_K, SamplingFeature.SAMPLING_FEATURE_MIN_P,
            SamplingFeature.SAMPLING_FEATURE_PRESENCE_PENALTY, SamplingFeature.SAMPLING_FEATURE_FREQUENCY_PENALTY,
            SamplingFeature.SAMPLING_FEATURE_REPETITION_PENALTY, SamplingFeature.SAMPLING_FEATURE_LOGIT_BIAS,
            SamplingFeature.SAMPLING_FEATURE_LOGPROBS);

    private final SimEngineConfig config;
    private final SimText text;
    private final SimScript script;
    private final EngineCapabilities capabilities;

    /**
     * @param script scripted replies, or null
     * @throws IllegalArgumentException when the script needs a text side the engine has not, or names
     *                                  token ids outside the vocabulary
     */
    SimReplies(SimEngineConfig config, SimScript script) {
        this.config = config;
        this.text = SimText.of(config.namespace().tokenizerId(), config.vocabSize());
        this.script = script;
        if (script != null) {
            if (script.needsText() && text == null) {
                throw new IllegalArgumentException("sim script " + script.origin() + " has text rules or replies, which need a "
                        + "cl100k_base model (tokenizer " + config.namespace().tokenizerId() + ", vocabulary "
                        + config.vocabSize() + "); use prompt-hash and reply-tokens");
            }
            script.checkVocabulary(config.vocabSize());
            if (text != null) {
                text.decode(new int[0]); // builds the decoding table now, not under the first request's engine lock
            }
        }
        EngineCapabilities.Builder caps = EngineCapabilities.newBuilder().addAllFeatures(ALWAYS)
                .setMaxTopLogprobs(MAX_TOP_LOGPROBS);
        if (text != null) {
            caps.addFeatures(SamplingFeature.SAMPLING_FEATURE_JSON_OBJECT).addFeatures(SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA);
        }
        this.capabilities = caps.build();
    }

    EngineCapabilities capabilities() {
        return capabilities;
    }

    /** The sampler of {@code request}; throws {@link InvalidRequestException} for output this engine cannot write. */
    TokenSampler samplerFor(EngineRequest request, long streamSeed) {
        int[] forced = script == null ? null : script.reply(request.promptTokens(), text);
        SamplingOptions.OutputFormat format = request.options().format();
        if (forced == null && format.constrained()) {
            if (text == null) {
                throw new InvalidRequestException("structured output needs a cl100k_base model on the simulated engine");
            }
            String json = JsonSchemaSampler.sample(format.kind() == SamplingOptions.OutputFormat.Kind.JSON_SCHEMA
                    ? format.schema() : null, streamSeed);
            forced = text.encode(json);
        }
        return TokenSampler.of(request, streamSeed, config, forced);
    }
}
