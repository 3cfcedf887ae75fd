package io.flotilla.gateway.output;

import io.flotilla.gateway.tokenize.Tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A model's tokenizer that decodes chosen special tokens as their text: the markers a tool-call or
 * reasoning parser must see ({@code [TOOL_CALLS]}, {@code <｜tool▁sep｜>}, …) where the tokenizer marks
 * them special and the detokenizer would render them as nothing. Every other id decodes as before.
 */
final class MarkedTokenizer implements Tokenizer {

    private final Tokenizer base;
    private final Map<Integer, byte[]> shown;

    private MarkedTokenizer(Tokenizer base, Map<Integer, byte[]> shown) {
        this.base = base;
        this.shown = shown;
    }

    /** {@code base}, or a wrapper when some marker is a single special token of it. */
    static Tokenizer of(Tokenizer base, List<String> markers) {
        Map<Integer, byte[]> shown = new HashMap<>();
        for (String marker : markers) {
            int[] ids = base.encode(marker);
            if (ids.length == 1) {
                byte[] bytes = base.tokenBytes(ids[0]);
                if (bytes != null && bytes.length == 0) {
                    shown.put(ids[0], marker.getBytes(StandardCharsets.UTF_8));
                }
            }
        }
        return shown.isEmpty() ? base : new MarkedTokenizer(base, Map.copyOf(shown));
    }

    @Override
    public String id() {
        return base.id();
    }

    @Override
    public int[] encode(String text) {
        return base.encode(text);
    }

    @Override
    public int[] encodeWithSpecialTokens(String text) {
        return base.encodeWithSpecialTokens(text);
    }

    @Override
    public int vocabSize() {
        return base.vocabSize();
    }

    @Override
    public byte[] tokenBytes(int id) {
        byte[] marker = shown.get(id);
        return marker != null ? marker : base.tokenBytes(id);
    }
}
