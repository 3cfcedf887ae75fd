package io.flotilla.gateway.tokenize;

import java.util.List;
import java.util.Map;

/**
 * Turns a conversation into the prompt text a model was trained on, ending with the cue for the
 * assistant's reply.
 */
public interface ChatTemplate {

    /** Template name, as configured ({@code chat-template}). */
    String id();

    /**
     * The prompt for {@code messages} (at least one), ending with the generation prompt.
     *
     * @param tools the tools the model may call, as OpenAI states them ({@code {"type": "function",
     *              "function": {name, description, parameters}}}, JSON objects as maps); empty for none
     * @throws TemplateRejectedException when the template refuses the conversation
     */
    String render(List<ChatMessage> messages, List<Map<String, Object>> tools);

    default String render(List<ChatMessage> messages) {
        return render(messages, List.of());
    }
}
