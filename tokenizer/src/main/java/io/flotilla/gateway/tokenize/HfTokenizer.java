package io.flotilla.gateway.tokenize;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.TokenizersLibrary;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A HuggingFace {@code tokenizer.json}, run by the tokenizers library itself (Rust, through DJL's JNI
 * binding), so prompts get exactly the ids transformers and vLLM would give them.
 *
 * <ul>
 *   <li>{@link #encode} is {@code tokenizer(text, add_special_tokens=False)}: the chat template already
 *       wrote BOS and the other markers, and added tokens written in the text ({@code <|eot_id|>},
 *       {@code <|im_start|>}, …) become their ids, as in vLLM's chat path;</li>
 *   <li>{@link #encodeWithSpecialTokens} lets the post-processor add them (Llama's BOS), as vLLM does for
 *       a text completion;</li>
 *   <li>{@link #tokenBytes} comes from {@link HfTokenBytes}: generated text streams token by token.</li>
 * </ul>
 * Truncation and padding are off whatever {@code tokenizer.json} says: the gateway checks the context
 * length itself. Thread-safe; {@link #close()} frees the native tokenizer (after the last request).
 *
 * <p>The native library ships inside the DJL jar for linux-x86_64/aarch64, osx-aarch64 and win-x86_64 and
 * is unpacked to {@code $DJL_CACHE_DIR} (default {@code ~/.djl.ai}, else the temp directory) on first
 * use. Unless told otherwise ({@code ai.djl.offline} / {@code DJL_OFFLINE}, {@code OPT_OUT_TRACKING}), this
 * class turns on DJL's offline mode and opts out of its telemetry before loading anything: offline, DJL
 * uses the CPU build from the jar instead of downloading a CUDA build on GPU hosts, and never calls home.
 */
public final class HfTokenizer implements Tokenizer, AutoCloseable {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Map<String, String> OPTIONS = Map.of(
            "addSpecialTokens", "false", "truncation", "false", "padding", "false");

    static {
        keepDjlOffline();
    }

    private final String id;
    private final HuggingFaceTokenizer tokenizer;
    private final byte[][] tokenBytes;

    private HfTokenizer(String id, HuggingFaceTokenizer tokenizer, byte[][] tokenBytes) {
        this.id = id;
        this.tokenizer = tokenizer;
        this.tokenBytes = tokenBytes;
    }

    /**
     * @param id            tokenizer id of the block-hash namespace (must equal the workers')
     * @param tokenizerJson a {@code tokenizer.json}
     * @throws IllegalArgumentException when the file cannot be read, is not a tokenizer, or has a decoder
     *                                  that cannot be streamed token by token
     */
    public static HfTokenizer load(String id, Path tokenizerJson) {
        JsonNode json;
        try {
            json = JSON.readTree(Files.readString(tokenizerJson));
        } catch (IOException | JacksonException e) {
            throw new IllegalArgumentException("cannot read " + tokenizerJson + ": " + e.getMessage(), e);
        }
        byte[][] bytes;
        try {
            bytes = HfTokenBytes.of(json);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(tokenizerJson + ": " + e.getMessage(), e);
        }
        HuggingFaceTokenizer loaded;
        try {
            loaded = HuggingFaceTokenizer.newInstance(tokenizerJson, OPTIONS);
        } catch (IOException | RuntimeException e) { // the Rust side rejects malformed files with a RuntimeException
            throw new IllegalArgumentException("cannot load " + tokenizerJson + " with the tokenizers library: "
                    + e.getMessage(), e);
        }
        HfTokenizer tokenizer = new HfTokenizer(id, loaded, bytes);
        try {
            tokenizer.checkAddedTokenIds(json, tokenizerJson);
        } catch (IllegalArgumentException e) {
            tokenizer.close();
            throw e;
        }
        return tokenizer;
    }

    /**
     * The library numbers added tokens that are not in the model's vocabulary right after it, whatever
     * the file says (it only logs a warning); token bytes come from the file's ids, so they must agree.
     */
    private void checkAddedTokenIds(JsonNode json, Path file) {
        for (JsonNode added : json.path("added_tokens")) {
            String content = added.path("content").asString("");
            int[] ids = encode(content);
            if (ids.length == 1 && ids[0] != added.path("id").asInt()) {
                throw new IllegalArgumentException(file + ": added token " + content + " has id "
                        + added.path("id").asInt() + " in the file but " + ids[0] + " in the tokenizers library");
            }
        }
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public int[] encode(String text) {
        return encode(text, false);
    }

    @Override
    public int[] encodeWithSpecialTokens(String text) {
        return encode(text, true);
    }

    /**
     * Ids only, straight from the binding: {@code HuggingFaceTokenizer.encode} also copies out the token
     * strings, offsets, masks and word ids of every token, which costs about as much again.
     */
    private int[] encode(String text, boolean addSpecialTokens) {
        long encoding = TokenizersLibrary.LIB.encode(tokenizer.getHandle(), text, addSpecialTokens);
        try {
            return ids(TokenizersLibrary.LIB.getTokenIds(encoding));
        } finally {
            TokenizersLibrary.LIB.deleteEncoding(encoding);
        }
    }

    @Override
    public int vocabSize() {
        return tokenBytes.length;
    }

    @Override
    public byte[] tokenBytes(int id) {
        return id >= 0 && id < tokenBytes.length ? tokenBytes[id] : null;
    }

    /** The tokenizers library's own decoding, special tokens skipped; for checks, not for streaming. */
    String decode(int[] ids) {
        long[] longs = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            longs[i] = ids[i];
        }
        return tokenizer.decode(longs, true);
    }

    @Override
    public void close() {
        tokenizer.close();
    }

    private static int[] ids(long[] ids) {
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }

    private static void keepDjlOffline() {
        if (System.getProperty("ai.djl.offline") == null && System.getenv("DJL_OFFLINE") == null) {
            System.setProperty("ai.djl.offline", "true");
        }
        if (System.getProperty("OPT_OUT_TRACKING") == null && System.getenv("OPT_OUT_TRACKING") == null) {
            System.setProperty("OPT_OUT_TRACKING", "true");
        }
    }
}
