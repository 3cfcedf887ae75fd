package io.flotilla.worker.engine;

import io.flotilla.protocol.v1.SamplingFeature;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Sampling beyond temperature and seed, as the request states it. Every field has an "off" value that
 * changes nothing ({@link #DEFAULT}); an engine that cannot honour a field set to another value refuses
 * the request ({@link #featuresUsed()} against {@link Engine#capabilities()}), it never ignores it.
 *
 * @param topP              nucleus mass; off at 1 (and 0, which the protocol leaves unset)
 * @param topK              keep the k most likely tokens; off at 0
 * @param minP              drop tokens below {@code minP × p(most likely)}; off at 0
 * @param presencePenalty   subtracted from the logit of every token generated at least once; off at 0
 * @param frequencyPenalty  subtracted once per earlier occurrence in the output; off at 0
 * @param repetitionPenalty divides positive (multiplies negative) logits of prompt and output tokens; off at 1
 * @param logitBias         added to the logits of these token ids
 * @param logprobs          report each generated token's log-probability
 * @param topLogprobs       and this many most likely alternatives at each position
 * @param format            constrained output, {@link OutputFormat#FREE} when none
 * @param stopStrings       stop strings; the gateway matches them on the decoded text in any case, an
 *                          engine that can stop on them itself does (they need no capability)
 */
public record SamplingOptions(double topP, int topK, double minP, double presencePenalty, double frequencyPenalty,
                              double repetitionPenalty, Map<Integer, Float> logitBias, boolean logprobs,
                              int topLogprobs, OutputFormat format, List<String> stopStrings) {

    public static final SamplingOptions DEFAULT = new SamplingOptions(1, 0, 0, 0, 0, 1, Map.of(), false, 0,
            OutputFormat.FREE, List.of());

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

    public boolean topPActive() {
        return topP > 0 && topP < 1;
    }

    public boolean repetitionPenaltyActive() {
        return repetitionPenalty > 0 && repetitionPenalty != 1;
    }

    /** Whether any logit processing or truncation is asked for (else sampling is plain softmax sampling). */
    public boolean shapesDistribution() {
        return topPActive() || topK > 0 || minP > 0 || presencePenalty != 0 || frequencyPenalty != 0
                || repetitionPenaltyActive() || !logitBias.isEmpty();
    }

    /** The capabilities this request needs from its engine. */
    public Set<SamplingFeature> featuresUsed() {
        Set<SamplingFeature> used = EnumSet.noneOf(SamplingFeature.class);
        if (topPActive()) {
            used.add(SamplingFeature.SAMPLING_FEATURE_TOP_P);
        }
        if (topK > 0) {
            used.add(SamplingFeature.SAMPLING_FEATURE_TOP_K);
        }
        if (minP > 0) {
            used.add(SamplingFeature.SAMPLING_FEATURE_MIN_P);
        }
        if (presencePenalty != 0) {
            used.add(SamplingFeature.SAMPLING_FEATURE_PRESENCE_PENALTY);
        }
        if (frequencyPenalty != 0) {
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
