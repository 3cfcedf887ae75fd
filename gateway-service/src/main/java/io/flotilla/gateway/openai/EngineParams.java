package io.flotilla.gateway.openai;

import io.flotilla.gateway.toolcall.ForcedToolCalls;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StructuredOutput;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What of a request goes to the engine as {@code SamplingParams}, and whether the model's engines can
 * honour it: each sampling parameter set to other than its "off" value needs its feature in the
 * capabilities every routable worker of the model advertises, else the request is a 400 naming the
 * parameter — it is never sent and ignored. Structured output comes from {@code response_format}, or
 * from a forced {@code tool_choice} ({@link ForcedToolCalls#schema}).
 */
public final class EngineParams {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private EngineParams() {
    }

    public static SamplingParams sampling(CompletionRequest r) {
        SamplingRequest s = r.sampling();
        SamplingParams.Builder b = SamplingParams.newBuilder()
                .putAllLogitBias(s.logitBias())
                .setLogprobs(r.logprobs().enabled())
                .setTopLogprobs(r.logprobs().top());
        // Only what the client sent: an unset field lets the engine apply the model's own default.
        setIfSent(s.temperature(), b::setTemperature);
        setIfSent(s.topP(), b::setTopP);
        setIfSent(s.topK(), b::setTopK);
        setIfSent(s.minP(), b::setMinP);
        setIfSent(s.presencePenalty(), b::setPresencePenalty);
        setIfSent(s.frequencyPenalty(), b::setFrequencyPenalty);
        setIfSent(s.repetitionPenalty(), b::setRepetitionPenalty);
        if (s.seed() != null) {
            b.setSeed(s.seed());
        }
        StructuredOutput structured = structured(r);
        if (structured != null) {
            b.setStructuredOutput(structured);
        }
        return b.build();
    }

    private static <T> void setIfSent(T value, java.util.function.Consumer<T> setter) {
        if (value != null) {
            setter.accept(value);
        }
    }

    private static StructuredOutput structured(CompletionRequest r) {
        ToolsRequest tools = r.tools();
        if (tools.active() && tools.forced()) {
            Map<String, Object> parameters = new LinkedHashMap<>();
            tools.tools().forEach(t -> parameters.put(t.name(), t.parameters()));
            String name = tools.choice() == ToolsRequest.Choice.FUNCTION ? tools.function() : null;
            return StructuredOutput.newBuilder()
                    .setJsonSchema(JSON.writeValueAsString(ForcedToolCalls.schema(parameters, name, tools.parallel())))
                    .setSchemaName(name == null ? "tool_calls" : name)
                    .build();
        }
        return switch (r.format().kind()) {
            case JSON_OBJECT -> StructuredOutput.newBuilder().setJsonObject(true).build();
            case JSON_SCHEMA -> StructuredOutput.newBuilder().setJsonSchema(r.format().schema())
                    .setSchemaName(r.format().name()).build();
            case TEXT -> null;
        };
    }

    /** @throws ApiError 400 {@code unsupported_parameter} naming the first parameter the engines cannot honour */
    public static void checkSupported(CompletionRequest r, EngineCapabilities capabilities, String model) {
        List<SamplingFeature> have = capabilities.getFeaturesList();
        for (Map.Entry<String, SamplingFeature> need : needs(r).entrySet()) {
            if (!have.contains(need.getValue())) {
                throw ApiError.unsupported(need.getKey(), "Unsupported parameter '" + need.getKey() + "': the engines "
                        + "serving '" + model + "' cannot honour it (they honour: " + describe(have) + ").");
            }
        }
        if (r.logprobs().top() > capabilities.getMaxTopLogprobs()) {
            String param = r.kind() == CompletionKind.CHAT ? "top_logprobs" : "logprobs";
            throw ApiError.unsupported(param, "Unsupported value of '" + param + "': the engines serving '" + model
                    + "' return at most " + capabilities.getMaxTopLogprobs() + " alternatives per token.");
        }
    }

    /** Each parameter the request sets, with the feature it needs. */
    static Map<String, SamplingFeature> needs(CompletionRequest r) {
        SamplingRequest s = r.sampling();
        Map<String, SamplingFeature> needs = new LinkedHashMap<>();
        if (s.topPActive()) {
            needs.put("top_p", SamplingFeature.SAMPLING_FEATURE_TOP_P);
        }
        if (s.topKActive()) {
            needs.put("top_k", SamplingFeature.SAMPLING_FEATURE_TOP_K);
        }
        if (s.minPActive()) {
            needs.put("min_p", SamplingFeature.SAMPLING_FEATURE_MIN_P);
        }
        if (s.presencePenaltyActive()) {
            needs.put("presence_penalty", SamplingFeature.SAMPLING_FEATURE_PRESENCE_PENALTY);
        }
        if (s.frequencyPenaltyActive()) {
            needs.put("frequency_penalty", SamplingFeature.SAMPLING_FEATURE_FREQUENCY_PENALTY);
        }
        if (s.repetitionPenaltyActive()) {
            needs.put("repetition_penalty", SamplingFeature.SAMPLING_FEATURE_REPETITION_PENALTY);
        }
        if (!s.logitBias().isEmpty()) {
            needs.put("logit_bias", SamplingFeature.SAMPLING_FEATURE_LOGIT_BIAS);
        }
        if (r.logprobs().enabled()) {
            needs.put("logprobs", SamplingFeature.SAMPLING_FEATURE_LOGPROBS);
        }
        if (r.tools().active() && r.tools().forced()) {
            needs.put("tool_choice", SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA);
        }
        if (r.format().kind() == OutputFormat.Kind.JSON_OBJECT) {
            needs.put("response_format", SamplingFeature.SAMPLING_FEATURE_JSON_OBJECT);
        } else if (r.format().kind() == OutputFormat.Kind.JSON_SCHEMA) {
            needs.put("response_format", SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA);
        }
        return needs;
    }

    private static String describe(List<SamplingFeature> features) {
        List<String> names = new ArrayList<>();
        for (SamplingFeature f : features) {
            if (f != SamplingFeature.UNRECOGNIZED && f != SamplingFeature.SAMPLING_FEATURE_UNSPECIFIED) {
                names.add(f.name().substring("SAMPLING_FEATURE_".length()).toLowerCase(java.util.Locale.ROOT));
            }
        }
        return names.isEmpty() ? "temperature and seed only" : names.stream().collect(Collectors.joining(", "));
    }
}
