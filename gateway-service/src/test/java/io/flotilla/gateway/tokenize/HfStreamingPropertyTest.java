package io.flotilla.gateway.tokenize;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Differential check of streaming against the tokenizers library: for any sequence of ids of a
 * byte-level tokenizer (specials, split characters and invalid UTF-8 included), the chunks
 * {@link IncrementalDetokenizer} releases one token at a time add up to the library's
 * {@code decode(ids, skip_special_tokens=True)}.
 */
class HfStreamingPropertyTest {

    private static Path file;
    private static HfTokenizer tokenizer;

    @BeforeContainer
    static void load() throws IOException {
        file = Files.createTempFile("tiny-byte-level", ".json");
        Files.writeString(file, TinyTokenizers.byteLevel());
        tokenizer = HfTokenizer.load("tiny", file);
    }

    @AfterContainer
    static void close() throws IOException {
        tokenizer.close();
        Files.delete(file);
    }

    @Property(seed = "20240726", tries = 500)
    void streamedTextEqualsTheLibrarysDecode(@ForAll("assignedIds") List<Integer> ids) {
        int[] array = ids.stream().mapToInt(Integer::intValue).toArray();
        IncrementalDetokenizer d = new IncrementalDetokenizer(tokenizer);
        StringBuilder streamed = new StringBuilder();
        for (int id : array) {
            streamed.append(d.push(new int[]{id}));
        }
        streamed.append(d.finish());
        assertThat(streamed.toString()).isEqualTo(tokenizer.decode(array));
    }

    /** Every id of the vocabulary: bytes, merges, special and other added tokens. */
    @Provide
    Arbitrary<List<Integer>> assignedIds() {
        return Arbitraries.integers().between(0, tokenizer.vocabSize() - 1).list().ofMaxSize(24);
    }
}
