package io.flotilla.gguf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real model with no download: a llama-architecture GGUF with seeded random f32 weights and a
 * 1,024-token byte-level BPE vocabulary (256 byte tokens, 765 merges learned from a built-in text,
 * {@code <|endoftext|>}, {@code <|im_start|>}, {@code <|im_end|>}), written with the matching
 * {@code tokenizer.json} and {@code tokenizer_config.json} (ChatML chat template, also in the GGUF's
 * {@code tokenizer.chat_template}). It says nothing sensible, but llama.cpp runs it like any model, and
 * the gateway and the engine tokenize it identically. The same seed and shape give byte-identical files;
 * the vocabulary does not depend on the seed (so neither does the tokenizer's name).
 */
public final class TinyModel {

    public static final String GGUF = "model.gguf";
    public static final int VOCAB_SIZE = 1024;
    public static final String END_OF_TEXT = "<|endoftext|>";
    public static final String IM_START = "<|im_start|>";
    public static final String IM_END = "<|im_end|>";
    /** The tokenizer's {@code name_or_path}: the gateway's block-hash namespace for this vocabulary. */
    public static final String TOKENIZER_NAME = "flotilla/tiny-bpe-1024";
    /** ChatML, as Qwen2's instruct models use it (without tools). */
    public static final String CHAT_TEMPLATE = "{%- for message in messages %}"
            + "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
            + "{%- endfor %}"
            + "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

    private static final List<String> SPECIALS = List.of(END_OF_TEXT, IM_START, IM_END);

    /**
     * The model's size.
     *
     * @param layers        transformer blocks
     * @param width         embedding width
     * @param heads         attention heads (query and key/value alike); divides {@code width}
     * @param feedForward   feed-forward width
     * @param contextLength trained context, which llama.cpp takes as the default and the maximum
     */
    public record Shape(int layers, int width, int heads, int feedForward, int contextLength) {

        /** 4 layers, 256 wide, 4 heads, feed-forward 768, context 8,192: 15.7 MB. */
        public static final Shape DEFAULT = new Shape(4, 256, 4, 768, 8192);

        public Shape {
            if (layers <= 0 || width <= 0 || heads <= 0 || feedForward <= 0 || contextLength <= 0 || width % heads != 0) {
                throw new IllegalArgumentException("not a model shape: " + layers + " layers, width " + width
                        + ", " + heads + " heads, feed-forward " + feedForward + ", context " + contextLength);
            }
        }
    }

    /** The files written into the model directory. */
    public record Written(Path dir, Path gguf, Path tokenizerJson, Path tokenizerConfig) {
    }

    private TinyModel() {
    }

    /** Writes the default-shape model of this seed into {@code dir} (created if missing; files replaced). */
    public static Written write(Path dir, long seed) throws IOException {
        return write(dir, seed, Shape.DEFAULT);
    }

    public static Written write(Path dir, long seed, Shape shape) throws IOException {
        Files.createDirectories(dir);
        BpeVocabulary vocab = vocabulary(shape.contextLength());
        Path gguf = dir.resolve(GGUF);
        gguf(vocab, seed, shape).write(gguf);
        TokenizerFiles.Written tokenizer = TokenizerFiles.write(vocab, dir);
        return new Written(dir, gguf, tokenizer.tokenizerJson(), tokenizer.tokenizerConfig());
    }

    /** The vocabulary: byte tokens in byte order, then merges in the order learned, then the special tokens. */
    static BpeVocabulary vocabulary(long contextLength) {
        List<String[]> learned = BpeTrainer.learn(corpus(), VOCAB_SIZE - 256 - SPECIALS.size());
        List<String> tokens = new ArrayList<>(VOCAB_SIZE);
        for (int b = 0; b < 256; b++) {
            tokens.add(String.valueOf(ByteLevel.charOf(b)));
        }
        List<String> merges = new ArrayList<>(learned.size());
        for (String[] pair : learned) {
            tokens.add(pair[0] + pair[1]);
            merges.add(pair[0] + " " + pair[1]);
        }
        tokens.addAll(SPECIALS);
        int[] types = new int[tokens.size()];
        for (int id = 0; id < types.length; id++) {
            types[id] = SPECIALS.contains(tokens.get(id)) ? BpeVocabulary.CONTROL : BpeVocabulary.NORMAL;
        }
        return new BpeVocabulary(TOKENIZER_NAME, "gpt-2", tokens, types, merges, tokens.indexOf(END_OF_TEXT),
                tokens.indexOf(IM_END), tokens.indexOf(END_OF_TEXT), false, CHAT_TEMPLATE, contextLength);
    }

    private static GgufWriter gguf(BpeVocabulary vocab, long seed, Shape shape) {
        long n = shape.width();
        long ff = shape.feedForward();
        long nVocab = vocab.tokens().size();
        GgufWriter w = new GgufWriter()
                .put("general.architecture", GgufValue.string("llama"))
                .put("general.name", GgufValue.string("flotilla-tiny-seed-" + seed))
                .put("general.file_type", GgufValue.uint32(0)) // all f32
                .put("llama.vocab_size", GgufValue.uint32(nVocab))
                .put("llama.context_length", GgufValue.uint32(shape.contextLength()))
                .put("llama.embedding_length", GgufValue.uint32(n))
                .put("llama.block_count", GgufValue.uint32(shape.layers()))
                .put("llama.feed_forward_length", GgufValue.uint32(ff))
                .put("llama.attention.head_count", GgufValue.uint32(shape.heads()))
                .put("llama.attention.head_count_kv", GgufValue.uint32(shape.heads()))
                .put("llama.rope.dimension_count", GgufValue.uint32(n / shape.heads()))
                .put("llama.rope.freq_base", GgufValue.float32(10000f))
                .put("llama.attention.layer_norm_rms_epsilon", GgufValue.float32(1e-5f))
                .put("tokenizer.ggml.model", GgufValue.string("gpt2"))
                .put("tokenizer.ggml.pre", GgufValue.string(vocab.pre()))
                .put("tokenizer.ggml.tokens", GgufValue.strings(vocab.tokens()))
                .put("tokenizer.ggml.token_type", GgufValue.int32s(vocab.types()))
                .put("tokenizer.ggml.merges", GgufValue.strings(vocab.merges()))
                .put("tokenizer.ggml.bos_token_id", GgufValue.uint32(vocab.bosId()))
                .put("tokenizer.ggml.eos_token_id", GgufValue.uint32(vocab.eosId()))
                .put("tokenizer.ggml.padding_token_id", GgufValue.uint32(vocab.padId()))
                .put("tokenizer.ggml.add_bos_token", GgufValue.bool(vocab.addBos()))
                .put("tokenizer.ggml.add_eos_token", GgufValue.bool(false))
                .put("tokenizer.chat_template", GgufValue.string(vocab.chatTemplate()));
        Weights rng = new Weights(seed);
        float[] embeddings = rng.uniform(n * nVocab, 0.5f);
        for (long t = 0; t < nVocab; t++) {
            embeddings[Math.toIntExact(t * n)] = TEXT_BIAS; // dimension 0 of every token: a constant
        }
        w.addF32("token_embd.weight", new long[]{n, nVocab}, embeddings);
        for (int l = 0; l < shape.layers(); l++) {
            String b = "blk." + l + ".";
            w.addF32(b + "attn_norm.weight", new long[]{n}, Weights.ones(n));
            w.addF32(b + "attn_q.weight", new long[]{n, n}, rng.scaled(n, n));
            w.addF32(b + "attn_k.weight", new long[]{n, n}, rng.scaled(n, n));
            w.addF32(b + "attn_v.weight", new long[]{n, n}, rng.scaled(n, n));
            w.addF32(b + "attn_output.weight", new long[]{n, n}, keepDimensionZero(rng.scaled(n, n), n));
            w.addF32(b + "ffn_norm.weight", new long[]{n}, Weights.ones(n));
            w.addF32(b + "ffn_gate.weight", new long[]{n, ff}, rng.scaled(n, ff));
            w.addF32(b + "ffn_up.weight", new long[]{n, ff}, rng.scaled(n, ff));
            w.addF32(b + "ffn_down.weight", new long[]{ff, n}, keepDimensionZero(rng.scaled(ff, n), ff));
        }
        w.addF32("output_norm.weight", new long[]{n}, Weights.ones(n));
        float[] output = rng.scaled(n, nVocab);
        for (int t = 0; t < nVocab; t++) {
            output[Math.toIntExact(t * n)] = textual(vocab, t) ? 0f : -NON_TEXT_PENALTY;
        }
        w.addF32("output.weight", new long[]{n, nVocab}, output);
        return w;
    }

    /**
     * The tiny model writes text, as a trained model does: dimension 0 of the residual stream is a constant (every
     * embedding's is {@link #TEXT_BIAS} and no layer writes to it), and the output layer turns it into a large
     * negative logit for every token that is not whole UTF-8 text by itself (a lone byte of a multi-byte character,
     * an invalid byte) and for the special tokens other than end-of-sequence. Random weights otherwise sample such
     * tokens one time in eight, and a stream of invalid UTF-8 is nothing a real model produces.
     */
    static final float TEXT_BIAS = 8f;
    static final float NON_TEXT_PENALTY = 16f;

    /** Layer weights {@code (in, out)} with nothing written to output dimension 0. */
    private static float[] keepDimensionZero(float[] weights, long in) {
        java.util.Arrays.fill(weights, 0, Math.toIntExact(in), 0f);
        return weights;
    }

    /** Whether token {@code id} is whole text: valid UTF-8 by itself, or the end of the sequence. */
    static boolean textual(BpeVocabulary vocab, int id) {
        if (id == vocab.eosId()) {
            return true;
        }
        if (vocab.isSpecial(id)) {
            return false;
        }
        byte[] bytes = ByteLevel.decode(vocab.tokens().get(id));
        if (bytes == null) {
            return true; // an added token written as plain text
        }
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT).decode(java.nio.ByteBuffer.wrap(bytes));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    private static String corpus() {
        try (InputStream in = TinyModel.class.getResourceAsStream("tiny-corpus.txt")) {
            if (in == null) {
                throw new IllegalStateException("tiny-corpus.txt is missing from the gguf jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** SplitMix64, spelled out so the weights of a seed never change with the JDK. */
    private static final class Weights {
        private long state;

        Weights(long seed) {
            state = seed;
        }

        /** Uniform in [-limit, limit). */
        float[] uniform(long count, float limit) {
            float[] v = new float[Math.toIntExact(count)];
            for (int i = 0; i < v.length; i++) {
                v[i] = ((next() >>> 40) * 0x1.0p-24f * 2f - 1f) * limit;
            }
            return v;
        }

        /** A layer's weights for {@code in} inputs: uniform with variance 1/in (keeps activations in scale). */
        float[] scaled(long in, long out) {
            return uniform(in * out, (float) Math.sqrt(3.0 / in));
        }

        static float[] ones(long count) {
            float[] v = new float[Math.toIntExact(count)];
            java.util.Arrays.fill(v, 1f);
            return v;
        }

        private long next() {
            long z = (state += 0x9E3779B97F4A7C15L);
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }
    }
}
