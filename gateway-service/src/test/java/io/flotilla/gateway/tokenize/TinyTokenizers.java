package io.flotilla.gateway.tokenize;

import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Small but real-format {@code tokenizer.json} files, so tests run the tokenizers library on something
 * whose ids can be worked out by hand (real ones are megabytes).
 *
 * <p>{@link #byteLevel()} is shaped like Llama 3's: GPT-2 byte-level BPE, a post-processor that puts
 * {@code <|begin_of_text|>} in front of a single sequence, a {@code ByteLevel} decoder. Ids 0–255 are
 * the 256 bytes (id = byte value), then the merges:
 * <pre>
 * 256 He   257 ll   258 Hell  259 Hello  260 Ġw  261 or  262 Ġwor  263 ld  264 Ġworld
 * 265 Ã© (é)        266 ðŁ (F0 9F)        267 ĺĢ (98 80)   -- 😀 is 266 267
 * </pre>
 * 268–279 are special added tokens ({@link #SPECIAL}); 280 is {@code <tool>}, an added token that is
 * not special. (The tokenizers library numbers added tokens that are not in the model's vocabulary
 * right after it, whatever the file says, so real files have no gaps there.)
 *
 * <p>{@link #sentencePiece()} is shaped like Llama 2 / Mistral 7B v0.1's: {@code <unk> <s> </s>}, byte
 * fallback pieces {@code <0x00>}…{@code <0xFF>} (ids 3–258), a {@code ▁}-prepending normalizer, a
 * post-processor adding {@code <s>}, and the {@code Replace ▁, ByteFallback, Fuse, Strip} decoder.
 * Merges give 267 ▁H, 268 ll, 269 ell, 270 ▁Hell, 271 ▁Hello, 272 ▁w, 273 or, 274 ▁wor, 275 ld, 276 ▁world.
 */
public final class TinyTokenizers {

    /** Special added tokens of {@link #byteLevel()}, ids 268, 269, …. */
    public static final List<String> SPECIAL = List.of("<|begin_of_text|>", "<|end_of_text|>",
            "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>",
            "<|endoftext|>", "<s>", "</s>", "[INST]", "[/INST]");
    public static final int BEGIN_OF_TEXT = 268;
    public static final int EOT = 272;
    public static final int TOOL = 280;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private TinyTokenizers() {
    }

    public static String byteLevel() {
        ObjectNode root = JSON.createObjectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ArrayNode added = root.putArray("added_tokens");
        for (int i = 0; i < SPECIAL.size(); i++) {
            addedToken(added, BEGIN_OF_TEXT + i, SPECIAL.get(i), true);
        }
        addedToken(added, TOOL, "<tool>", false);
        root.putNull("normalizer");
        ObjectNode pre = root.putObject("pre_tokenizer");
        pre.put("type", "ByteLevel").put("add_prefix_space", false).put("trim_offsets", true).put("use_regex", true);
        ObjectNode post = root.putObject("post_processor");
        post.put("type", "Sequence");
        ArrayNode processors = post.putArray("processors");
        processors.addObject().put("type", "ByteLevel").put("add_prefix_space", true).put("trim_offsets", false)
                .put("use_regex", true);
        processors.add(bosTemplate("<|begin_of_text|>", BEGIN_OF_TEXT));
        ObjectNode decoder = root.putObject("decoder");
        decoder.put("type", "ByteLevel").put("add_prefix_space", true).put("trim_offsets", true).put("use_regex", true);
        ObjectNode model = bpeModel(root, false);
        ObjectNode vocab = model.putObject("vocab");
        String[] byteChars = byteLevelChars();
        for (int b = 0; b < 256; b++) {
            vocab.put(byteChars[b], b);
        }
        merges(model, vocab, 256, "H e", "l l", "He ll", "Hell o", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld",
                "Ã ©", "ð Ł", "ĺ Ģ");
        return JSON.writeValueAsString(root);
    }

    public static String sentencePiece() {
        ObjectNode root = JSON.createObjectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ArrayNode added = root.putArray("added_tokens");
        addedToken(added, 0, "<unk>", true);
        addedToken(added, 1, "<s>", true);
        addedToken(added, 2, "</s>", true);
        ObjectNode normalizer = root.putObject("normalizer");
        normalizer.put("type", "Sequence");
        ArrayNode normalizers = normalizer.putArray("normalizers");
        normalizers.addObject().put("type", "Prepend").put("prepend", "▁");
        ObjectNode replace = normalizers.addObject().put("type", "Replace");
        replace.putObject("pattern").put("String", " ");
        replace.put("content", "▁");
        root.putNull("pre_tokenizer");
        root.set("post_processor", bosTemplate("<s>", 1));
        ObjectNode decoder = root.putObject("decoder");
        decoder.put("type", "Sequence");
        ArrayNode decoders = decoder.putArray("decoders");
        ObjectNode space = decoders.addObject().put("type", "Replace");
        space.putObject("pattern").put("String", "▁");
        space.put("content", " ");
        decoders.addObject().put("type", "ByteFallback");
        decoders.addObject().put("type", "Fuse");
        decoders.addObject().put("type", "Strip").put("content", " ").put("start", 1).put("stop", 0);
        ObjectNode model = bpeModel(root, true);
        model.put("unk_token", "<unk>");
        ObjectNode vocab = model.putObject("vocab");
        vocab.put("<unk>", 0).put("<s>", 1).put("</s>", 2);
        for (int b = 0; b < 256; b++) {
            vocab.put(String.format("<0x%02X>", b), 3 + b);
        }
        String[] pieces = {"▁", "H", "e", "l", "o", "w", "r", "d"};
        for (int i = 0; i < pieces.length; i++) {
            vocab.put(pieces[i], 259 + i);
        }
        merges(model, vocab, 267, "▁ H", "l l", "e ll", "▁H ell", "▁Hell o", "▁ w", "o r", "▁w or", "l d", "▁wor ld");
        return JSON.writeValueAsString(root);
    }

    /**
     * A model directory: {@code tokenizer.json} ({@link #byteLevel()}) and the {@code tokenizer_config.json}
     * and {@code chat_template.jinja} of the test resource folder {@code resourceDir}, where present.
     */
    public static Path modelDir(Path dir, String resourceDir) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("tokenizer.json"), byteLevel());
            for (String name : List.of("tokenizer_config.json", "chat_template.jinja")) {
                try (InputStream in = TinyTokenizers.class.getResourceAsStream(resourceDir + "/" + name)) {
                    if (in != null) {
                        Files.write(dir.resolve(name), in.readAllBytes());
                    }
                }
            }
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void addedToken(ArrayNode added, int id, String content, boolean special) {
        added.addObject().put("id", id).put("content", content).put("single_word", false).put("lstrip", false)
                .put("rstrip", false).put("normalized", false).put("special", special);
    }

    private static ObjectNode bosTemplate(String bos, int id) {
        ObjectNode t = JSON.createObjectNode();
        t.put("type", "TemplateProcessing");
        ArrayNode single = t.putArray("single");
        single.addObject().putObject("SpecialToken").put("id", bos).put("type_id", 0);
        single.addObject().putObject("Sequence").put("id", "A").put("type_id", 0);
        ArrayNode pair = t.putArray("pair");
        pair.addObject().putObject("SpecialToken").put("id", bos).put("type_id", 0);
        pair.addObject().putObject("Sequence").put("id", "A").put("type_id", 0);
        pair.addObject().putObject("SpecialToken").put("id", bos).put("type_id", 1);
        pair.addObject().putObject("Sequence").put("id", "B").put("type_id", 1);
        ObjectNode token = t.putObject("special_tokens").putObject(bos);
        token.put("id", bos);
        token.putArray("ids").add(id);
        token.putArray("tokens").add(bos);
        return t;
    }

    private static ObjectNode bpeModel(ObjectNode root, boolean byteFallback) {
        ObjectNode model = root.putObject("model");
        model.put("type", "BPE");
        model.putNull("dropout");
        model.putNull("unk_token");
        model.putNull("continuing_subword_prefix");
        model.putNull("end_of_word_suffix");
        model.put("fuse_unk", byteFallback);
        model.put("byte_fallback", byteFallback);
        model.put("ignore_merges", false);
        return model;
    }

    private static void merges(ObjectNode model, ObjectNode vocab, int firstId, String... merges) {
        ArrayNode list = model.putArray("merges");
        int id = firstId;
        for (String merge : merges) {
            list.add(merge);
            vocab.put(merge.replace(" ", ""), id++);
        }
    }

    /** GPT-2's bytes_to_unicode: the character standing for each byte. */
    static String[] byteLevelChars() {
        String[] chars = new String[256];
        int next = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            chars[b] = String.valueOf((char) (printable ? b : 256 + next++));
        }
        return chars;
    }
}
