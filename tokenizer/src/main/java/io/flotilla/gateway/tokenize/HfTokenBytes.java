package io.flotilla.gateway.tokenize;

import tools.jackson.databind.JsonNode;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bytes each token of a HuggingFace {@code tokenizer.json} stands for in generated text, worked out
 * once from its vocabulary, added tokens and decoder, so that {@link IncrementalDetokenizer} can stream
 * token by token without splitting a UTF-8 character.
 *
 * <p>Per-token bytes are exact for the decoders of generative models:
 * <ul>
 *   <li>{@code ByteLevel} (GPT-2, Llama 3, Qwen2, Mistral Nemo, DeepSeek): each character of a token
 *       stands for one byte (GPT-2's byte-to-unicode table); a token with a character outside the
 *       table stands for its own UTF-8 bytes, as in the tokenizers library;</li>
 *   <li>SentencePiece style, {@code Metaspace} or a {@code Sequence} of {@code Replace} (string
 *       patterns), {@code ByteFallback}, {@code Fuse} and {@code Strip} (Llama 2, Mistral 7B, Gemma):
 *       {@code ▁} becomes a space and {@code <0xNN>} the byte NN.</li>
 * </ul>
 * Decoders that drop the first token's leading space (Metaspace's prefix, {@code Strip} after
 * {@code Fuse}) do so only at the very start of a text; a stream continues its prompt, so the space is
 * kept, as vLLM's incremental detokenizer keeps it. Special tokens render as nothing (vLLM's default
 * {@code skip_special_tokens}). Other decoders ({@code WordPiece}, {@code BPEDecoder}, {@code CTC},
 * regex {@code Replace}) are refused with {@link IllegalArgumentException}.
 */
final class HfTokenBytes {

    private static final byte[] NONE = new byte[0];
    private static final Pattern BYTE_TOKEN = Pattern.compile("<0x([0-9A-Fa-f]{2})>");
    /** GPT-2's {@code bytes_to_unicode}, inverted: the byte each of the 256 characters stands for. */
    private static final Map<Character, Byte> BYTE_LEVEL = byteLevelTable();

    private sealed interface Step permits Replace, ByteFallback, ByteLevel, StripEach {
    }

    private record Replace(String pattern, String content) implements Step {
    }

    private record ByteFallback() implements Step {
    }

    private record ByteLevel() implements Step {
    }

    private record StripEach(char content, int start, int stop) implements Step {
    }

    private HfTokenBytes() {
    }

    /**
     * @return bytes by id (length = vocabulary size incl. added tokens); {@code null} for ids no token has
     */
    static byte[][] of(JsonNode tokenizerJson) {
        String[] tokens = tokens(tokenizerJson);
        boolean[] special = new boolean[tokens.length];
        for (JsonNode added : tokenizerJson.path("added_tokens")) {
            if (added.path("special").asBoolean(false)) {
                special[added.path("id").asInt()] = true;
            }
        }
        List<Step> steps = new ArrayList<>();
        decoder(tokenizerJson.path("decoder"), steps, new boolean[]{false});
        byte[][] bytes = new byte[tokens.length][];
        for (int id = 0; id < tokens.length; id++) {
            if (tokens[id] != null) {
                bytes[id] = special[id] ? NONE : bytes(tokens[id], steps);
            }
        }
        return bytes;
    }

    /** Token strings by id, from the model's vocabulary and the added tokens (which take precedence). */
    private static String[] tokens(JsonNode json) {
        JsonNode model = json.path("model");
        JsonNode vocab = model.path("vocab");
        int size = 0;
        List<Map.Entry<String, Integer>> entries = new ArrayList<>();
        if ("Unigram".equals(model.path("type").asString(""))) {
            for (int i = 0; i < vocab.size(); i++) {
                entries.add(Map.entry(vocab.get(i).get(0).asString(), i));
            }
        } else if (vocab.isObject()) {
            for (Map.Entry<String, JsonNode> e : vocab.properties()) {
                entries.add(Map.entry(e.getKey(), e.getValue().asInt()));
            }
        } else {
            throw new IllegalArgumentException("tokenizer.json has no model.vocab");
        }
        for (JsonNode added : json.path("added_tokens")) {
            entries.add(Map.entry(added.path("content").asString(), added.path("id").asInt()));
        }
        for (Map.Entry<String, Integer> e : entries) {
            if (e.getValue() < 0) {
                throw new IllegalArgumentException("tokenizer.json: negative token id " + e.getValue());
            }
            size = Math.max(size, e.getValue() + 1);
        }
        String[] tokens = new String[size];
        for (Map.Entry<String, Integer> e : entries) {
            tokens[e.getValue()] = e.getKey();
        }
        return tokens;
    }

    /** Flattens the decoder into per-token steps; {@code fused[0]} records that a Fuse was passed. */
    private static void decoder(JsonNode d, List<Step> steps, boolean[] fused) {
        if (d.isMissingNode() || d.isNull()) {
            throw new IllegalArgumentException("tokenizer.json has no decoder; cannot stream its tokens");
        }
        String type = d.path("type").asString("");
        switch (type) {
            case "Sequence" -> {
                for (Iterator<JsonNode> it = d.path("decoders").iterator(); it.hasNext(); ) {
                    decoder(it.next(), steps, fused);
                }
            }
            case "ByteLevel" -> steps.add(new ByteLevel());
            case "ByteFallback" -> steps.add(new ByteFallback());
            case "Fuse" -> fused[0] = true;
            case "Metaspace" -> steps.add(new Replace(d.path("replacement").asString("\u2581"), " "));
            case "Replace" -> {
                JsonNode pattern = d.path("pattern");
                if (!pattern.has("String")) {
                    throw new IllegalArgumentException("tokenizer.json decoder Replace with a regex pattern "
                            + pattern + " cannot be applied token by token");
                }
                steps.add(new Replace(pattern.path("String").asString(), d.path("content").asString("")));
            }
            case "Strip" -> {
                // After Fuse it strips the start of the whole text, which a stream never is (see class doc).
                String content = d.path("content").asString(" ");
                if (!fused[0] && content.length() == 1) {
                    steps.add(new StripEach(content.charAt(0), d.path("start").asInt(0), d.path("stop").asInt(0)));
                }
            }
            default -> throw new IllegalArgumentException("tokenizer.json decoder '" + type + "' cannot be streamed "
                    + "token by token (supported: ByteLevel, Metaspace, and Sequences of Replace, ByteFallback, "
                    + "Fuse and Strip)");
        }
    }

    private static byte[] bytes(String token, List<Step> steps) {
        String s = token;
        for (Step step : steps) {
            if (step instanceof Replace r) {
                s = s.replace(r.pattern(), r.content());
            } else if (step instanceof ByteFallback) {
                Matcher m = BYTE_TOKEN.matcher(s);
                if (m.matches()) {
                    return new byte[]{(byte) Integer.parseInt(m.group(1), 16)};
                }
            } else if (step instanceof ByteLevel) {
                return byteLevel(s);
            } else if (step instanceof StripEach strip) {
                s = strip(s, strip);
            }
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] byteLevel(String s) {
        byte[] out = new byte[s.length()];
        for (int i = 0; i < s.length(); i++) {
            Byte b = BYTE_LEVEL.get(s.charAt(i));
            if (b == null) {
                return s.getBytes(StandardCharsets.UTF_8);
            }
            out[i] = b;
        }
        return out;
    }

    private static String strip(String s, StripEach strip) {
        int from = 0;
        while (from < strip.start() && from < s.length() && s.charAt(from) == strip.content()) {
            from++;
        }
        int to = s.length();
        while (s.length() - to < strip.stop() && to > from && s.charAt(to - 1) == strip.content()) {
            to--;
        }
        return s.substring(from, to);
    }

    private static Map<Character, Byte> byteLevelTable() {
        Map<Character, Byte> table = new java.util.HashMap<>();
        int next = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + next++);
            table.put(c, (byte) b);
        }
        return Map.copyOf(table);
    }
}
