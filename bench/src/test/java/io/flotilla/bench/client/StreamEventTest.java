package io.flotilla.bench.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StreamEventTest {

    @Test
    void doneAndErrors() {
        assertThat(StreamEvent.parse("message", "[DONE]")).isInstanceOf(StreamEvent.Done.class);
        assertThat(StreamEvent.parse("message", "{\"error\":{\"message\":\"worker lost\",\"code\":503}}"))
                .isEqualTo(new StreamEvent.Failure("worker lost (code 503)"));
        assertThat(StreamEvent.parse("message", "{\"error\":\"plain\"}")).isEqualTo(new StreamEvent.Failure("plain"));
        assertThat(StreamEvent.parse("error", "{\"message\":\"typed\"}")).isEqualTo(new StreamEvent.Failure("typed"));
        assertThat(StreamEvent.parse("message", "not json")).isInstanceOf(StreamEvent.Failure.class);
    }

    @Test
    void aChunkWithTokenIdsCarriesThatManyTokens() {
        StreamEvent e = StreamEvent.parse("message",
                "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"text\":\"ab c\",\"token_ids\":[5,6,7]}],\"usage\":null}");
        StreamEvent.Chunk c = (StreamEvent.Chunk) e;
        assertThat(c.content()).isTrue();
        assertThat(c.tokens()).isEqualTo(3);
        assertThat(c.tokenIds()).containsExactly(5, 6, 7);
        assertThat(c.usage()).isNull();
    }

    @Test
    void textChunksCountOneTokenAndEmptyTextIsNoContent() {
        StreamEvent.Chunk text = (StreamEvent.Chunk) StreamEvent.parse("message", "{\"choices\":[{\"text\":\"hello world\"}]}");
        assertThat(text.content()).isTrue();
        assertThat(text.tokens()).isEqualTo(1);

        StreamEvent.Chunk finish = (StreamEvent.Chunk) StreamEvent.parse("message",
                "{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}");
        assertThat(finish.content()).isFalse();
        assertThat(finish.tokens()).isZero();

        StreamEvent.Chunk chat = (StreamEvent.Chunk) StreamEvent.parse("message", "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}");
        assertThat(chat.content()).isTrue();
    }

    @Test
    void theUsageChunk() {
        StreamEvent.Chunk u = (StreamEvent.Chunk) StreamEvent.parse("message",
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":8,\"total_tokens\":108,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":64}}}");
        assertThat(u.content()).isFalse();
        assertThat(u.usage()).isEqualTo(new StreamEvent.Usage(100, 64, 8));

        StreamEvent.Chunk noDetails = (StreamEvent.Chunk) StreamEvent.parse("message",
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"prompt_tokens_details\":null}}");
        assertThat(noDetails.usage()).isEqualTo(new StreamEvent.Usage(10, 0, 2));
    }
}
