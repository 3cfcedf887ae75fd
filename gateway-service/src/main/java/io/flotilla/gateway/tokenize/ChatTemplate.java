package io.flotilla.gateway.tokenize;

import java.util.List;

/**
 * Turns a conversation into the prompt text a model was trained on, ending with the cue for the
 * assistant's reply. A Jinja template from a model directory would be another implementation.
 */
public interface ChatTemplate {

    /** Template name, as configured ({@code chat-template}). */
    String id();

    /** The prompt for {@code messages} (at least one), ending with the generation prompt. */
    String render(List<ChatMessage> messages);
}
