package io.flotilla.worker.engine.sglang;

import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.openai.CompletionChunk;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** SGLang's {@code /generate} stream payloads, as SGLang's tokenizer manager builds them. */
class GenerateChunkDecoderTest {

    private static String chunk(String text, String ids, String finish, int completion) {
        return "{" + (text == null ? "" : "\"text\":\"" + text + "\",") + "\"output_ids\":" + ids
                + ",\"meta_info\":{\"id\":\"r\",\"finish_reason\":" + finish + ",\"prompt_tokens\":9,"
                + "\"completion_tokens\":" + completion + ",\"cached_tokens\":4}}";
    }

    @Test
    void cumulativeOutputIsRelayedAsDeltas() {
        GenerateChunkDecoder d = new GenerateChunkDecoder();
        assertThat(d.decode(chunk("a", "[5]", "null", 1)).tokenIds()).containsExactly(5);
        assertThat(d.decode(chunk("ab", "[5,6]", "null", 2)).tokenIds()).containsExactly(6);
        CompletionChunk last = d.decode(chunk("abc", "[5,6,7]", "{\"type\":\"length\",\"length\":3}", 3));
        assertThat(last.tokenIds()).containsExactly(7);
        assertThat(last.finishReason()).isEqualTo("length");
        assertThat(last.usage()).isEqualTo(new CompletionChunk.Usage(9, 3, 4));
    }

    @Test
    void incrementalOutputIsRelayedAsItComes() {
        GenerateChunkDecoder d = new GenerateChunkDecoder();
        assertThat(d.decode(chunk("a", "[5,6]", "null", 2)).tokenIds()).containsExactly(5, 6);
        assertThat(d.decode(chunk("c", "[7]", "null", 3)).tokenIds()).containsExactly(7);
        assertThat(d.decode(chunk(null, "[8]", "{\"type\":\"stop\",\"matched\":8}", 4)).finishReason()).isEqualTo("stop");
    }

    @Test
    void aStreamErrorWithoutACodeIsTheClientsMistake() {
        CompletionChunk c = new GenerateChunkDecoder().decode("{\"error\":{\"message\":\"input too long\"}}");
        assertThat(c.error()).isInstanceOf(InvalidRequestException.class).hasMessageContaining("input too long");
    }
}
