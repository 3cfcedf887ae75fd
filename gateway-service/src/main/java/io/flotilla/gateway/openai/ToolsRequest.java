package io.flotilla.gateway.openai;

import java.util.List;
import java.util.Map;

/**
 * The tools of a chat request and how the model may use them.
 *
 * @param tools    function tools, in request order
 * @param choice   {@code tool_choice}: {@code auto} by default when tools are given, {@code none} otherwise
 * @param function with {@link Choice#FUNCTION}: the function the model must call
 * @param parallel {@code parallel_tool_calls} (default true): false keeps one call per answer
 */
public record ToolsRequest(List<Tool> tools, Choice choice, String function, boolean parallel) {

    public static final ToolsRequest NONE = new ToolsRequest(List.of(), Choice.NONE, null, true);

    public enum Choice { NONE, AUTO, REQUIRED, FUNCTION }

    /**
     * One function tool.
     *
     * @param name       function name
     * @param parameters its JSON Schema as maps and lists (null when not given)
     * @param template   the whole tool object as the chat template sees it
     */
    public record Tool(String name, Object parameters, Map<String, Object> template) {
    }

    public ToolsRequest {
        tools = List.copyOf(tools);
    }

    /** Whether the model is shown the tools and its output parsed for calls. */
    public boolean active() {
        return choice != Choice.NONE && !tools.isEmpty();
    }

    /** Whether the calls are forced (required or a named function): the output is constrained JSON. */
    public boolean forced() {
        return choice == Choice.REQUIRED || choice == Choice.FUNCTION;
    }

    /** The tools as chat templates take them. */
    public List<Map<String, Object>> templateTools() {
        return active() ? tools.stream().map(Tool::template).toList() : List.of();
    }
}
