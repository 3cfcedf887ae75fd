package io.flotilla.gateway.tokenize;

import java.util.Objects;

/**
 * One message of a chat conversation after validation.
 *
 * @param role    system, developer, user or assistant
 * @param name    optional participant name; null when absent
 * @param content the message text (text parts joined with a newline)
 */
public record ChatMessage(String role, String name, String content) {

    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
    }
}
