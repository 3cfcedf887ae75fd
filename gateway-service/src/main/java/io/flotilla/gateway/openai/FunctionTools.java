package io.flotilla.gateway.openai;

import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;

/**
 * The {@code tools} array of every API that takes function tools (chat completions, Responses, Anthropic
 * Messages): an array, at most {@link #MAX_TOOLS} entries, each function named once. What differs
 * between the APIs is passed in: how one tool is read, and the {@link Wording} of the mistakes, so
 * that each API's clients see their own field paths and messages. Stateless.
 */
public final class FunctionTools {

    /** Most tools per request (OpenAI's limit, which Anthropic shares). */
    public static final int MAX_TOOLS = 128;

    /**
     * How one API names the places in its {@code tools} array and words the array's mistakes.
     *
     * @param item      the path of the tool at an index ({@code tools[0]}, {@code tools.0})
     * @param namePath  the path of a tool's name, given the tool's path
     * @param tooMany   the message for more than {@link #MAX_TOOLS} tools
     * @param duplicate the message for a name used twice, given the name
     */
    public record Wording(IntFunction<String> item, UnaryOperator<String> namePath, String tooMany,
                          UnaryOperator<String> duplicate) {
    }

    /** OpenAI's wording; the name lies at {@code nameSuffix} under each tool ({@code .function.name}, {@code .name}). */
    public static Wording openAi(String nameSuffix) {
        return new Wording(i -> "tools[" + i + "]", item -> item + nameSuffix,
                "Invalid 'tools': at most " + MAX_TOOLS + " tools are allowed.",
                name -> "Invalid 'tools': the function name '" + name + "' is used twice.");
    }

    private FunctionTools() {
    }

    /**
     * The tools of {@code p}'s {@code tools} field, in request order (empty when it is absent).
     *
     * @param tool reads one tool, given its JSON and its path; it refuses what its API refuses
     */
    public static List<ToolsRequest.Tool> parse(JsonParams p, Wording wording,
                                                BiFunction<JsonNode, String, ToolsRequest.Tool> tool) {
        JsonNode tools = p.node("tools");
        List<ToolsRequest.Tool> out = new ArrayList<>();
        if (tools == null) {
            return out;
        }
        if (!tools.isArray()) {
            throw p.wrongType("tools", "an array", tools);
        }
        if (tools.size() > MAX_TOOLS) {
            throw ApiError.invalid("tools", wording.tooMany());
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < tools.size(); i++) {
            String path = wording.item().apply(i);
            ToolsRequest.Tool t = tool.apply(tools.get(i), path);
            if (!names.add(t.name())) {
                throw ApiError.invalid(wording.namePath().apply(path), wording.duplicate().apply(t.name()));
            }
            out.add(t);
        }
        return out;
    }
}
