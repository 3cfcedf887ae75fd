package io.flotilla.gateway.openai;

import tools.jackson.databind.JsonNode;

import java.util.List;
import java.util.function.Predicate;

/**
 * OpenAI parameters this server knows but does not implement. Each is accepted only with a value that
 * changes nothing (its default, e.g. {@code echo: false}, {@code functions: []}); anything else is a 400
 * naming the parameter, never silently ignored.
 */
final class UnsupportedParams {

    /**
     * @param name     top-level parameter
     * @param harmless values that mean "feature off"; JSON null always counts as off
     * @param why      the end of the error message
     */
    record Rule(String name, Predicate<JsonNode> harmless, String why) {
    }

    private static final Predicate<JsonNode> NEVER = n -> false;
    private static final Predicate<JsonNode> FALSE = n -> n.isBoolean() && !n.booleanValue();
    private static final Predicate<JsonNode> EMPTY = n -> (n.isArray() || n.isObject()) && n.isEmpty();
    private static final Predicate<JsonNode> ONE = n -> n.isNumber() && n.doubleValue() == 1;
    private static final Predicate<JsonNode> NONE_CHOICE = n -> n.isString() && n.stringValue().equals("none");
    private static final Predicate<JsonNode> EMPTY_STRING = n -> n.isString() && n.stringValue().isEmpty();
    private static final Predicate<JsonNode> TEXT_MODALITY = n -> n.isArray() && n.size() == 1
            && n.get(0).isString() && n.get(0).stringValue().equals("text");
    private static final Predicate<JsonNode> DEFAULT_TIER = n -> n.isString()
            && (n.stringValue().equals("auto") || n.stringValue().equals("default"));

    static final List<Rule> CHAT = List.of(
            new Rule("functions", EMPTY, "the deprecated functions API is not supported; use tools"),
            new Rule("function_call", NONE_CHOICE, "the deprecated functions API is not supported; use tool_choice"),
            new Rule("modalities", TEXT_MODALITY, "only text output is supported"),
            new Rule("audio", NEVER, "audio output is not supported"),
            new Rule("prediction", NEVER, "predicted outputs are not supported"),
            new Rule("reasoning_effort", NEVER, "reasoning effort is not supported (reasoning models think as their "
                    + "template tells them)"),
            new Rule("verbosity", NEVER, "verbosity is not supported"),
            new Rule("web_search_options", NEVER, "web search is not supported"),
            new Rule("store", FALSE, "stored completions are not supported"),
            new Rule("metadata", EMPTY, "stored-completion metadata is not supported"),
            new Rule("service_tier", DEFAULT_TIER, "service tiers are not supported"),
            new Rule("prompt_cache_key", NEVER, "prompt cache keys are not supported (prefix caching is automatic)"),
            new Rule("safety_identifier", NEVER, "safety identifiers are not supported; use 'user'"));

    static final List<Rule> TEXT = List.of(
            new Rule("echo", FALSE, "echo is not supported"),
            new Rule("suffix", EMPTY_STRING, "suffix (insertion) is not supported"),
            new Rule("best_of", ONE, "best_of > 1 is not supported; use n"));

    private UnsupportedParams() {
    }

    static boolean known(List<Rule> rules, String name) {
        return rules.stream().anyMatch(r -> r.name().equals(name));
    }

    /** @throws ApiError naming the first parameter set to a value that would need an unsupported feature */
    static void check(JsonNode body, List<Rule> rules) {
        for (Rule r : rules) {
            JsonNode n = body.get(r.name());
            if (n != null && !n.isNull() && !r.harmless().test(n)) {
                throw ApiError.unsupported(r.name(), "Unsupported parameter '" + r.name() + "': " + r.why() + ".");
            }
        }
    }
}
