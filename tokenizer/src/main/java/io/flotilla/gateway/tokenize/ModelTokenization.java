package io.flotilla.gateway.tokenize;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Tokenizer and chat template of one model, and what the request path derives from them.
 *
 * @param tokenizer the model's tokenizer
 * @param template  the model's chat template
 */
public record ModelTokenization(Tokenizer tokenizer, ChatTemplate template) {

    /**
     * Prompt token ids of a conversation: the rendered template, encoded without adding special tokens.
     *
     * @param tools the tools the model may call (see {@link ChatTemplate#render}); empty for none
     * @throws TemplateRejectedException when the template refuses the conversation
     */
    public int[] chatPrompt(List<ChatMessage> messages, List<Map<String, Object>> tools) {
        return tokenizer.encode(template.render(messages, tools));
    }

    public int[] chatPrompt(List<ChatMessage> messages) {
        return chatPrompt(messages, List.of());
    }

    /** Prompt token ids of a text completion, with the special tokens the tokenizer adds (e.g. BOS). */
    public int[] textPrompt(String text) {
        return tokenizer.encodeWithSpecialTokens(text);
    }

    /**
     * Stop token ids for the engine: each stop string that is exactly one token. Every stop string is
     * also matched on the decoded text, which catches the ones that span tokens (or that the model
     * spells with other tokens).
     */
    public int[] singleTokenStops(List<String> stopStrings) {
        Set<Integer> ids = new LinkedHashSet<>();
        for (String s : stopStrings) {
            int[] t = tokenizer.encode(s);
            if (t.length == 1) {
                ids.add(t[0]);
            }
        }
        List<Integer> list = new ArrayList<>(ids);
        int[] out = new int[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = list.get(i);
        }
        return out;
    }
}
