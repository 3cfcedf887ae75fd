package io.flotilla.worker.engine;

import io.flotilla.protocol.v1.SamplingFeature;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Sampling beyond temperature and seed, as the client set it: a field the client left out is null (an engine that
 * takes a request body leaves it out too, so the model's own generation defaults apply), a field it set carries its
 * value exactly. Each field has a neutral value that changes nothing (1 for top_p and repetition_penalty, 0 for the
 * rest); an engine that cannot honour a field set to another value refuses the request ({@link #featuresUsed()}
 * against {@link Engine#capabilities()}), it never ignores it. Engines that sample themselves read the
 * {@code effective…} values: the client's, else the neutral one.
 *
 * @param topP              nucleus mass in (0, 1], or null
 * @param topK              keep the k most likely tokens (0 and -1: all), or null
 * @param minP              drop tokens below {@code minP × p(most likely)}, or null
 * @param presencePenalty   subtracted from the logit of every token generated at least once, or null
 * @param frequencyPenalty  subtracted once per earlier occurrence in the output, or null
 * @param repetitionPenalty divides positive (multiplies negative) logits of prompt and output tokens, or null
 * @param logitBias         added to the logits of these token ids
 * @param logprobs          report each generated token's log-probability
 * @param topLogprobs       and this many most likely alternatives at each position
 * @param format            constrained output, {@link OutputFormat#FREE} when none
 * @param stopStrings       stop strings; the gateway matches them on the decoded text in any case, an
 *                          engine that can stop on them itself does (they need no capability)
 */
public record SamplingOptions(Double topP, Integer topK, Double minP, Double presencePenalty, Double frequencyPenalty,
                              Double repetitionPenalty, Map<Integer, Double> logitBias, boolean logprobs,
                              int topLogprobs, OutputFormat format, List<String> stopStrings) {

    public static final SamplingOptions DEFAULT = new SamplingOptions(null, null, null, null, null, null, Map.of(), false,
            0, OutputFormat.FREE, List.of());

    /**
     * Constrained output.
     *
     * @param kind   free text, any JSON object, or JSON valid for {@code schema}
     * @param schema the JSON Schema as JSON text (only with {@link Kind#JSON_SCHEMA})
     * @param name   the schema's name, informational; may be empty
     */
    public record OutputFormat(Kind kind, String schema, String name) {

        public enum Kind { FREE, JSON_OBJECT, JSON_SCHEMA }

        public static final OutputFormat FREE = new OutputFormat(Kind.FREE, "", "");

        public OutputFormat {
            Objects.requireNonNull(kind, "kind");
            schema = schema == null ? "" : schema;
            name = name == null ? "" : name;
        }

        public boolean constrained() {
            return kind != Kind.FREE;
        }
    }

    public SamplingOptions {
        logitBias = logitBias == null ? Map.of() : Map.copyOf(logitBias);
        format = format == null ? OutputFormat.FREE : format;
        stopStrings = stopStrings == null ? List.of() : List.copyOf(stopStrings);
    }

    public double effectiveTopP() {
        return topP == null ? 1 : topP;
    }

    /** top_k, 0 when it keeps every token. */
    public int effectiveTopK() {
        return topK == null || topK < 0 ? 0 : topK;
    }

    public double effectiveMinP() {
        return minP == null ? 0 : minP;
    }

    public double effectivePresencePenalty() {
        return presencePenalty == null ? 0 : presencePenalty;
    }

    public double effectiveFrequencyPenalty() {
        return frequencyPenalty == null ? 0 : frequencyPenalty;
    }

    public double effectiveRepetitionPenalty() {
        return repetitionPenalty == null ? 1 : repetitionPenalty;
    }

    public boolean topPActive() {
        return effectiveTopP() > 0 && effectiveTopP() < 1;
    }

    public boolean repetitionPenaltyActive() {
        return effectiveRepetitionPenalty() > 0 && effectiveRepetitionPenalty() != 1;
    }

    /** Whether any logit processing or truncation is asked for (else sampling is plain softmax sampling). */
    public boolean shapesDistribution() {
        return topPActive() || effectiveTopK() > 0 || effectiveMinP() > 0 || effectivePresencePenalty() != 0
                || effectiveFrequencyPenalty() != 0 || repetitionPenaltyActive() || !logitBias.isEmpty();
    }

    /** The capabilities this request needs from its engine. */
    public Set<SamplingFeature> featuresUsed() {
        Set<SamplingFeature> used = EnumSet.noneOf(SamplingFeature.class);
        if (topPActive()) {
            used.add(SamplingFeature.SAMPLING_FEATURE_TOP_P);
        }
        if (effectiveTopK() > 0) {
            used.add(SamplingFeature.SAMPLING_FEATURE_TOP_K);
        }
        if (effectiveMinP() > 0) {
            used.add(SamplingFeature.SAMPLING_FEATURE_MIN_P);
        }
        if (effectivePresencePenalty() != 0) {
            used.add(SamplingFeature.SAMPLING_FEATURE_PRESENCE_PENALTY);
        }
        if (effectiveFrequencyPenalty() != 0) {
            used.add(SamplingFeature.SAMPLING_FEATURE_FREQUENCY_PENALTY);
        }
        if (repetitionPenaltyActive()) {
            used.add(SamplingFeature.SAMPLING_FEATURE_REPETITION_PENALTY);
        }
        if (!logitBias.isEmpty()) {
            used.add(SamplingFeature.SAMPLING_FEATURE_LOGIT_BIAS);
        }
        if (logprobs) {
            used.add(SamplingFeature.SAMPLING_FEATURE_LOGPROBS);
        }
        if (format.kind() == OutputFormat.Kind.JSON_OBJECT) {
            used.add(SamplingFeature.SAMPLING_FEATURE_JSON_OBJECT);
        } else if (format.kind() == OutputFormat.Kind.JSON_SCHEMA) {
            used.add(SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA);
        }
        return used;
    }
}
