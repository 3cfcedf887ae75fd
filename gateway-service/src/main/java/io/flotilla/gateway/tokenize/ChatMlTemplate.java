package io.flotilla.gateway.tokenize;

import java.util.List;

/**
 * ChatML: {@code <|im_start|>{role}[ name={name}]\n{content}<|im_end|>\n} per message, then
 * {@code <|im_start|>assistant\n}. The {@code developer} role is rendered as {@code system} (ChatML
 * predates it). With {@code cl100k_base} the markers are encoded as plain text, which is enough for
 * the simulated engine: it only needs stable token ids, not a model that understands the markers.
 */
public final class ChatMlTemplate implements ChatTemplate {

    public static final String ID = "chatml";

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String render(List<ChatMessage> messages) {
        StringBuilder out = new StringBuilder();
        for (ChatMessage m : messages) {
            out.append("<|im_start|>").append("developer".equals(m.role()) ? "system" : m.role());
            if (m.name() != null && !m.name().isEmpty()) {
                out.append(" name=").append(m.name());
            }
            out.append('\n').append(m.content()).append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
    }
}
