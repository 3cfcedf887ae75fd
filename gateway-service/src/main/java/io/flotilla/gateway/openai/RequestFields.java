package io.flotilla.gateway.openai;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every request field the gateway accepts, per endpoint, and where it goes. A field not listed is a
 * 400 ({@code Unrecognized request argument}); a field listed {@link Destination#OFF_ONLY} is a 400
 * unless it carries its "off" value ({@link UnsupportedParams}). A test sends each field with a value
 * that is not its default and checks that it arrives where this table says, so a field cannot be
 * accepted and then forgotten.
 */
public final class RequestFields {

    /** Where a field's value goes. */
    public enum Destination {
        /** The engine's {@code SamplingParams} (refused by name when the model's engines cannot honour it). */
        ENGINE_SAMPLING,
        /** The engine's {@code StopConditions} (and, for stop strings, the gateway's own matching). */
        ENGINE_STOP,
        /** {@code GenerateRequest.n}: choices computed on one worker. */
        ENGINE_CHOICES,
        /** The prompt: chat template and tokenizer. */
        PROMPT,
        /** Model resolution, routing and the response's {@code model}. */
        MODEL,
        /** The tenant of routing and accounting. */
        TENANT,
        /** The chat template (tools) and the tool-call parse of the output. */
        TOOLS,
        /** Only the shape of the gateway's response. */
        RESPONSE,
        /** Accepted only with its "off" value: the feature is not implemented. */
        OFF_ONLY
    }

    private static final Map<String, Destination> COMMON = new LinkedHashMap<>();
    private static final Map<String, Destination> CHAT = new LinkedHashMap<>();
    private static final Map<String, Destination> TEXT = new LinkedHashMap<>();

    static {
        COMMON.put("model", Destination.MODEL);
        COMMON.put("max_tokens", Destination.ENGINE_STOP);
        COMMON.put("stop", Destination.ENGINE_STOP);
        COMMON.put("stop_token_ids", Destination.ENGINE_STOP);
        COMMON.put("ignore_eos", Destination.ENGINE_STOP);
        COMMON.put("temperature", Destination.ENGINE_SAMPLING);
        COMMON.put("top_p", Destination.ENGINE_SAMPLING);
        COMMON.put("top_k", Destination.ENGINE_SAMPLING);
        COMMON.put("min_p", Destination.ENGINE_SAMPLING);
        COMMON.put("seed", Destination.ENGINE_SAMPLING);
        COMMON.put("presence_penalty", Destination.ENGINE_SAMPLING);
        COMMON.put("frequency_penalty", Destination.ENGINE_SAMPLING);
        COMMON.put("repetition_penalty", Destination.ENGINE_SAMPLING);
        COMMON.put("logit_bias", Destination.ENGINE_SAMPLING);
        COMMON.put("n", Destination.ENGINE_CHOICES);
        COMMON.put("stream", Destination.RESPONSE);
        COMMON.put("stream_options", Destination.RESPONSE);
        COMMON.put("user", Destination.TENANT);

        CHAT.putAll(COMMON);
        CHAT.put("messages", Destination.PROMPT);
        CHAT.put("max_completion_tokens", Destination.ENGINE_STOP);
        CHAT.put("logprobs", Destination.ENGINE_SAMPLING);
        CHAT.put("top_logprobs", Destination.ENGINE_SAMPLING);
        CHAT.put("response_format", Destination.ENGINE_SAMPLING);
        CHAT.put("tools", Destination.TOOLS);
        CHAT.put("tool_choice", Destination.TOOLS);
        CHAT.put("parallel_tool_calls", Destination.TOOLS);
        for (UnsupportedParams.Rule r : UnsupportedParams.CHAT) {
            CHAT.put(r.name(), Destination.OFF_ONLY);
        }

        TEXT.putAll(COMMON);
        TEXT.put("prompt", Destination.PROMPT);
        TEXT.put("logprobs", Destination.ENGINE_SAMPLING);
        for (UnsupportedParams.Rule r : UnsupportedParams.TEXT) {
            TEXT.put(r.name(), Destination.OFF_ONLY);
        }
    }

    private RequestFields() {
    }

    /** The accepted fields of an endpoint and their destinations, in documentation order. */
    public static Map<String, Destination> of(CompletionKind kind) {
        return java.util.Collections.unmodifiableMap(kind == CompletionKind.CHAT ? CHAT : TEXT);
    }

    static boolean accepted(CompletionKind kind, String field) {
        return of(kind).containsKey(field);
    }

    /** Fields that reach the engine (their values are checked against the engines' capabilities). */
    public static Set<String> engineFields(CompletionKind kind) {
        return of(kind).entrySet().stream()
                .filter(e -> List.of(Destination.ENGINE_SAMPLING, Destination.ENGINE_STOP, Destination.ENGINE_CHOICES)
                        .contains(e.getValue()))
                .map(Map.Entry::getKey)
                .collect(java.util.stream.Collectors.toCollection(java.util.LinkedHashSet::new));
    }
}
