package io.flotilla.gateway.tokenize;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Provide;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class IncrementalDetokenizerTest {

    private static final Cl100kTokenizer TOKENIZER = new Cl100kTokenizer();

    @Test
    void aCharacterSplitAcrossTokensIsHeldBackUntilComplete() {
        int[] emoji = TOKENIZER.encode("😀");
        assertThat(emoji).as("cl100k splits this emoji's 4 bytes over two tokens").hasSize(2);
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER);

        assertThat(d.push(new int[]{emoji[0]})).isEmpty();
        assertThat(d.push(new int[]{emoji[1]})).isEqualTo("😀");
        assertThat(d.finish()).isEmpty();
    }

    @Test
    void textBeforeAnIncompleteCharacterIsReleasedAtOnce() {
        int ok = TOKENIZER.encode("ok")[0];
        int[] emoji = TOKENIZER.encode("😀");
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER);
        assertThat(d.push(new int[]{ok, emoji[0]})).isEqualTo("ok");
        assertThat(d.push(new int[]{emoji[1], ok})).isEqualTo("😀ok");
    }

    @Test
    void specialTokensRenderAsNothingAndUnassignedIdsAsReplacement() {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER);
        int hello = TOKENIZER.encode("hello")[0];
        String text = d.push(new int[]{hello, 100257, 100276, 100256, 100261, 999_999, -1, hello});
        assertThat(text).isEqualTo("hello\uFFFD\uFFFD\uFFFD\uFFFDhello");
    }

    @Test
    void anIncompleteTailAtTheEndBecomesOneReplacementCharacter() {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER);
        int firstHalf = TOKENIZER.encode("😀")[0];
        assertThat(d.push(new int[]{firstHalf})).isEmpty();
        assertThat(d.finish()).isEqualTo("\uFFFD");
        assertThat(d.finish()).isEmpty();
    }

    @Test
    void completePrefixFindsTheStartOfATruncatedCharacter() {
        byte[] euro = "€".getBytes(StandardCharsets.UTF_8); // E2 82 AC
        assertThat(IncrementalDetokenizer.completePrefix(new byte[]{'a', euro[0]})).isEqualTo(1);
        assertThat(IncrementalDetokenizer.completePrefix(new byte[]{'a', euro[0], euro[1]})).isEqualTo(1);
        assertThat(IncrementalDetokenizer.completePrefix(new byte[]{'a', euro[0], euro[1], euro[2]})).isEqualTo(4);
        assertThat(IncrementalDetokenizer.completePrefix(new byte[]{'a', (byte) 0x80})).isEqualTo(2);
        assertThat(IncrementalDetokenizer.completePrefix(new byte[]{(byte) 0xFF})).isEqualTo(1);
    }

    /** Decoding token by token gives exactly the text that was encoded, for any text. */
    @Property(tries = 300, seed = "20261129")
    void tokenByTokenDecodingReproducesTheText(@ForAll("texts") List<String> pieces) {
        String text = String.join("", pieces);
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER);
        StringBuilder out = new StringBuilder();
        for (int id : TOKENIZER.encode(text)) {
            String piece = d.push(new int[]{id});
            assertThat(piece).doesNotContain("\uFFFD");
            out.append(piece);
        }
        out.append(d.finish());
        assertThat(out.toString()).isEqualTo(text);
    }

    @Provide
    Arbitrary<List<String>> texts() {
        return Arbitraries.of("a", "é", "✓", "😀", " ", "漢", "\n", "Hello ", "naïve café ", "👩‍👩‍👧", "日本語", "€")
                .list().ofMaxSize(30);
    }

    /** Random ids (as the simulator emits) never fail, and chunking never changes the text. */
    @Property(tries = 200, seed = "42")
    void randomIdsDecodeTheSameInAnyChunking(@ForAll @Size(min = 1, max = 60) List<@IntRange(min = 0, max = 100276) Integer> ids,
                                             @ForAll @IntRange(min = 1, max = 7) int chunk) {
        int[] all = ids.stream().mapToInt(Integer::intValue).toArray();
        IncrementalDetokenizer whole = new IncrementalDetokenizer(TOKENIZER);
        String expected = whole.push(all) + whole.finish();

        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < all.length; i += chunk) {
            String piece = d.push(java.util.Arrays.copyOfRange(all, i, Math.min(all.length, i + chunk)));
            assertThat(piece.isEmpty() || !Character.isHighSurrogate(piece.charAt(piece.length() - 1)))
                    .as("never ends a chunk inside a surrogate pair").isTrue();
            out.append(piece);
        }
        out.append(d.finish());
        assertThat(out.toString()).isEqualTo(expected);
    }
}
