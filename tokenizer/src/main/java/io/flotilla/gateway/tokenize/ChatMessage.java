package io.flotilla.gateway.tokenize;

import java.util.List;
import java.util.Objects;

/**
 * One message of a chat conversation after validation.
 *
 * @param role             system, developer, user, assistant or tool
 * @param name             optional participant name; null when absent
 * @param content          the message text (text parts joined with a newline); null only for an
 *                         assistant message that carries tool calls and no text
 * @param toolCalls        an assistant message's tool calls (empty otherwise)
 * @param toolCallId       a tool message's {@code tool_call_id}; null otherwise
 * @param reasoningContent an assistant message's earlier reasoning, for templates that render it; null when absent
 */
public record ChatMessage(String role, String name, String content, List<ToolCall> toolCalls, String toolCallId,
                          String reasoningContent) {

    /**
     * A tool call of an assistant message.
     *
     * @param id        the call's id (the tool message that answers it names it)
     * @param name      function name
     * @param arguments the arguments as the model wrote them: JSON text, usually an object
     */
    public record ToolCall(String id, String name, String arguments) {

        public ToolCall {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(arguments, "arguments");
        }
    }

    public ChatMessage {
        Objects.requireNonNull(role, "role");
        toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
        if (content == null && toolCalls.isEmpty()) {
            throw new IllegalArgumentException("a message without tool calls needs content");
        }
    }

    /** A message of text only. */
    public ChatMessage(String role, String name, String content) {
        this(role, name, Objects.requireNonNull(content, "content"), List.of(), null, null);
    }

    /** The content, or "" for an assistant message of tool calls only. */
    public String text() {
        return content == null ? "" : content;
    }
}
