package io.flotilla.gateway.tokenize;

import io.flotilla.gateway.jinja.PythonJson;

import java.util.List;
import java.util.Map;

/**
 * ChatML: {@code <|im_start|>{role}[ name={name}]\n{content}<|im_end|>\n} per message, then
 * {@code <|im_start|>assistant\n}. The {@code developer} role is rendered as {@code system} (ChatML
 * predates it). With {@code cl100k_base} the markers are encoded as plain text, which is enough for
 * the simulated engine: it only needs stable token ids, not a model that understands the markers.
 *
 * <p>Tools are rendered as Hermes and Qwen2.5 render them, so the {@code hermes} tool parser reads the
 * model's calls: the system message (the first message when it is one, else a new one) ends with a
 * {@code # Tools} section listing each tool as one line of JSON inside {@code <tools></tools>} and
 * asking for calls as {@code <tool_call>\n{"name": …, "arguments": …}\n</tool_call>}; an assistant
 * message's tool calls follow its text in that form; consecutive {@code tool} messages become one user
 * turn of {@code <tool_response>\n…\n</tool_response>} blocks.
 */
public final class ChatMlTemplate implements ChatTemplate {

    public static final String ID = "chatml";

    static final String TOOLS_HEADER = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            + "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
    static final String TOOLS_FOOTER = "\n</tools>\n\nFor each function call, return a json object with function name and "
            + "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
            + "\"arguments\": <args-json-object>}\n</tool_call>";

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String render(List<ChatMessage> messages, List<Map<String, Object>> tools) {
        StringBuilder out = new StringBuilder();
        int start = 0;
        if (!tools.isEmpty()) {
            out.append("<|im_start|>system\n");
            ChatMessage first = messages.get(0);
            if (first.role().equals("system") || first.role().equals("developer")) {
                out.append(first.text()).append("\n\n");
                start = 1;
            }
            out.append(TOOLS_HEADER);
            for (Map<String, Object> tool : tools) {
                out.append('\n').append(PythonJson.dumps(tool, null, null, false));
            }
            out.append(TOOLS_FOOTER).append("<|im_end|>\n");
        }
        for (int i = start; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            if (m.role().equals("tool")) {
                if (i == start || !messages.get(i - 1).role().equals("tool")) {
                    out.append("<|im_start|>user");
                }
                out.append("\n<tool_response>\n").append(m.text()).append("\n</tool_response>");
                if (i == messages.size() - 1 || !messages.get(i + 1).role().equals("tool")) {
                    out.append("<|im_end|>\n");
                }
                continue;
            }
            out.append("<|im_start|>").append("developer".equals(m.role()) ? "system" : m.role());
            if (m.name() != null && !m.name().isEmpty()) {
                out.append(" name=").append(m.name());
            }
            if (m.toolCalls().isEmpty()) {
                out.append('\n').append(m.text());
            } else {
                if (!m.text().isEmpty()) {
                    out.append('\n').append(m.text());
                }
                for (ChatMessage.ToolCall call : m.toolCalls()) {
                    out.append("\n<tool_call>\n{\"name\": ");
                    out.append(PythonJson.dumps(call.name(), null, null, false));
                    out.append(", \"arguments\": ").append(call.arguments()).append("}\n</tool_call>");
                }
            }
            out.append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
    }
}
