package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.InvalidRequestException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CompletionChunkTest {

    @Test
    void aVllmTokenChunk() {
        CompletionChunk c = CompletionChunk.parse("""
                {"id":"cmpl-1","object":"text_completion","created":1700000000,"model":"m","choices":[{"index":0,\
                "text":" the","logprobs":null,"finish_reason":null,"stop_reason":null,"token_ids":[279],\
                "prompt_logprobs":null,"prompt_token_ids":[1,2,3]}],"usage":null}""");
        assertThat(c.tokenIds()).containsExactly(279);
        assertThat(c.finishReason()).isNull();
        assertThat(c.usage()).isNull();
        assertThat(c.countedTokens()).isEqualTo(1);
    }

    @Test
    void theUsageChunkWithCachedTokens() {
        CompletionChunk c = CompletionChunk.parse("""
                {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[],\
                "usage":{"prompt_tokens":40,"total_tokens":43,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":32}}}""");
        assertThat(c.hasChoice()).isFalse();
        assertThat(c.usage()).isEqualTo(new CompletionChunk.Usage(40, 3, 32));
        assertThat(c.countedTokens()).isZero();
    }

    @Test
    void usageWithoutPromptDetailsMeansNoCachedTokens() {
        CompletionChunk c = CompletionChunk.parse("{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}");
        assertThat(c.usage()).isEqualTo(new CompletionChunk.Usage(5, 2, 0));
    }

    @Test
    void tokenIdsFromLogprobsWhenTheEngineReturnsTokensAsIds() {
        CompletionChunk c = CompletionChunk.parse("""
                {"choices":[{"index":0,"text":"x","logprobs":{"tokens":["token_id:17","token_id:18"],"token_logprobs":[-0.1,-0.2]},\
                "finish_reason":"stop"}]}""");
        assertThat(c.tokenIds()).containsExactly(17, 18);
        assertThat(c.finishReason()).isEqualTo("stop");
    }

    @Test
    void textOnlyChunksCountButCarryNoIds() {
        CompletionChunk c = CompletionChunk.parse("{\"choices\":[{\"index\":0,\"text\":\"hi\",\"finish_reason\":null}]}");
        assertThat(c.tokenIds()).isNull();
        assertThat(c.countedTokens()).isEqualTo(1);
    }

    @Test
    void errorObjectsInBothShapes() {
        assertThat(CompletionChunk.parse("{\"object\":\"error\",\"message\":\"too long\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}").error())
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("too long");
        assertThat(CompletionChunk.parse("{\"error\":{\"message\":\"busy\",\"type\":\"ServiceUnavailable\",\"code\":503}}").error())
                .isInstanceOf(EngineOverloadedException.class).hasMessageContaining("busy");
    }

    @Test
    void kvTransferParamsAreKeptAsJson() {
        CompletionChunk c = CompletionChunk.parse("{\"choices\":[],\"kv_transfer_params\":{\"remote_block_ids\":[1,2],\"remote_engine_id\":\"e\"}}");
        assertThat(c.kvTransferParams()).isEqualTo("{\"remote_block_ids\":[1,2],\"remote_engine_id\":\"e\"}");
    }

    @Test
    void finishReasons() {
        assertThat(CompletionChunk.finishReason("length")).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(CompletionChunk.finishReason("stop")).isEqualTo(FinishReason.FINISH_REASON_STOP);
        assertThat(CompletionChunk.finishReason("abort")).isEqualTo(FinishReason.FINISH_REASON_CANCELLED);
        assertThat(CompletionChunk.finishReason("error")).isEqualTo(FinishReason.FINISH_REASON_ERROR);
    }
}
