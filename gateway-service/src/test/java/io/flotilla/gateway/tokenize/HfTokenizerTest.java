package io.flotilla.gateway.tokenize;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link HfTokenizer} on the small tokenizers of {@link TinyTokenizers}, whose ids are worked out by hand:
 * encoding runs the real tokenizers library; streaming goes through {@link IncrementalDetokenizer}.
 * {@link HfStreamingPropertyTest} compares streaming with the library's own decoding on random ids.
 */
class HfTokenizerTest {

    private static Path dir;
    private static HfTokenizer byteLevel;
    private static HfTokenizer sentencePiece;

    @BeforeAll
    static void load() throws IOException {
        dir = Files.createTempDirectory("hf-tokenizer-test");
        byteLevel = HfTokenizer.load("tiny-byte-level", write("byte-level.json", TinyTokenizers.byteLevel()));
        sentencePiece = HfTokenizer.load("tiny-sp", write("sentence-piece.json", TinyTokenizers.sentencePiece()));
    }

    @AfterAll
    static void close() throws IOException {
        byteLevel.close();
        sentencePiece.close();
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(dir);
    }

    private static Path write(String name, String json) throws IOException {
        return Files.writeString(dir.resolve(name), json);
    }

    @Test
    void byteLevelEncodesLikeTheMergesSay() {
        assertThat(byteLevel.encode("Hello world")).containsExactly(259, 264);
        assertThat(byteLevel.encode("Héllo")).containsExactly('H', 265, 257, 'o');
        assertThat(byteLevel.encode(" 😀")).containsExactly(' ', 266, 267);
        assertThat(byteLevel.vocabSize()).isEqualTo(281);
        assertThat(byteLevel.id()).isEqualTo("tiny-byte-level");
    }

    @Test
    void encodeAddsNoSpecialTokensButMatchesTheOnesWrittenInTheText() {
        assertThat(byteLevel.encode("Hello")).containsExactly(259);
        assertThat(byteLevel.encodeWithSpecialTokens("Hello")).containsExactly(TinyTokenizers.BEGIN_OF_TEXT, 259);
        // the chat template writes <|begin_of_text|> itself: encoding its output must not add a second one
        int[] ids = byteLevel.encode("<|begin_of_text|><|start_header_id|>user<|end_header_id|>Hello<|eot_id|>");
        assertThat(ids).containsExactly(268, 270, 'u', 's', 'e', 'r', 271, 259, TinyTokenizers.EOT);
        assertThat(byteLevel.encode("<tool>")).containsExactly(TinyTokenizers.TOOL);
    }

    @Test
    void tokenBytes() {
        assertThat(byteLevel.tokenBytes(259)).isEqualTo("Hello".getBytes(StandardCharsets.UTF_8));
        assertThat(byteLevel.tokenBytes(264)).isEqualTo(" world".getBytes(StandardCharsets.UTF_8));
        assertThat(byteLevel.tokenBytes(266)).isEqualTo(new byte[]{(byte) 0xF0, (byte) 0x9F});
        assertThat(byteLevel.tokenBytes(10)).isEqualTo(new byte[]{'\n'});
        assertThat(byteLevel.tokenBytes(TinyTokenizers.EOT)).isEmpty(); // special: not rendered
        assertThat(byteLevel.tokenBytes(TinyTokenizers.TOOL)).isEqualTo("<tool>".getBytes(StandardCharsets.UTF_8));
        assertThat(byteLevel.tokenBytes(281)).isNull(); // beyond the vocabulary
        assertThat(byteLevel.tokenBytes(-1)).isNull();
    }

    @Test
    void streamingOneTokenAtATimeNeverSplitsACharacter() {
        String text = "Héllo 😀 world, ünïcödé ✓";
        int[] ids = byteLevel.encode(text);
        IncrementalDetokenizer d = new IncrementalDetokenizer(byteLevel);
        List<String> chunks = new ArrayList<>();
        for (int id : ids) {
            chunks.add(d.push(new int[]{id}));
        }
        chunks.add(d.finish());
        assertThat(String.join("", chunks)).isEqualTo(text);
        assertThat(chunks).noneMatch(c -> c.contains("\uFFFD"));
        int emojiFirstHalf = indexOf(ids, 266);
        assertThat(chunks.get(emojiFirstHalf)).isEmpty(); // F0 9F alone is half a character: held back
        assertThat(chunks.get(emojiFirstHalf + 1)).isEqualTo("😀");
    }

    @Test
    void sentencePieceByteFallbackAndSpaces() {
        assertThat(sentencePiece.encode("Hello world")).containsExactly(271, 276);
        assertThat(sentencePiece.encodeWithSpecialTokens("Hello world")).containsExactly(1, 271, 276);
        assertThat(sentencePiece.encode("é")).containsExactly(259, 3 + 0xC3, 3 + 0xA9);
        assertThat(sentencePiece.tokenBytes(271)).isEqualTo(" Hello".getBytes(StandardCharsets.UTF_8));
        assertThat(sentencePiece.tokenBytes(3 + 0xC3)).isEqualTo(new byte[]{(byte) 0xC3});
        assertThat(sentencePiece.tokenBytes(1)).isEmpty();

        int[] ids = sentencePiece.encode("Hello world é");
        IncrementalDetokenizer d = new IncrementalDetokenizer(sentencePiece);
        StringBuilder streamed = new StringBuilder();
        for (int id : ids) {
            String chunk = d.push(new int[]{id});
            assertThat(chunk).doesNotContain("\uFFFD");
            streamed.append(chunk);
        }
        streamed.append(d.finish());
        // A stream continues its prompt, so the first token keeps its space (vLLM does the same); the
        // library's decode of these ids alone strips it at the start of the text.
        assertThat(streamed.toString()).isEqualTo(" Hello world é");
        assertThat(sentencePiece.decode(ids)).isEqualTo("Hello world é");
    }

    @Test
    void refusesDecodersThatCannotStreamTokenByToken(@TempDir Path tmp) throws IOException {
        String wordPiece = TinyTokenizers.byteLevel()
                .replace("\"decoder\":{\"type\":\"ByteLevel\"", "\"decoder\":{\"type\":\"WordPiece\",\"prefix\":\"##\"");
        assertThat(wordPiece).contains("WordPiece");
        Path file = Files.writeString(tmp.resolve("tokenizer.json"), wordPiece);
        assertThatThrownBy(() -> HfTokenizer.load("x", file))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("decoder 'WordPiece' cannot be streamed");
    }

    @Test
    void refusesFilesThatAreNotTokenizers(@TempDir Path tmp) throws IOException {
        Path notJson = Files.writeString(tmp.resolve("a.json"), "{ not json");
        assertThatThrownBy(() -> HfTokenizer.load("x", notJson))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot read");
        Path noModel = Files.writeString(tmp.resolve("b.json"), "{\"decoder\": {\"type\": \"ByteLevel\"}}");
        assertThatThrownBy(() -> HfTokenizer.load("x", noModel))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("model.vocab");
        Path badModel = Files.writeString(tmp.resolve("c.json"),
                TinyTokenizers.byteLevel().replace("\"type\":\"BPE\"", "\"type\":\"NoSuchModel\""));
        assertThatThrownBy(() -> HfTokenizer.load("x", badModel))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tokenizers library");
    }

    private static int indexOf(int[] ids, int id) {
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == id) {
                return i;
            }
        }
        throw new AssertionError(id + " not in the ids");
    }
}
