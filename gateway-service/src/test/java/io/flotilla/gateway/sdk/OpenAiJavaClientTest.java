package io.flotilla.gateway.sdk;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.errors.UnprocessableEntityException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import com.openai.models.models.Model;
import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.FakeWorker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The official OpenAI Java SDK (strict response validation on) talking to the gateway. */
class OpenAiJavaClientTest extends GatewayTestBase {

    private OpenAIClient client;

    @BeforeEach
    void client() {
        client = OpenAIOkHttpClient.builder()
                .baseUrl(baseUrl() + "/v1")
                .apiKey("unused-the-gateway-is-open")
                .maxRetries(0)
                .responseValidation(true)
                .build();
    }

    @AfterEach
    void close() {
        client.close();
    }

    private static ChatCompletionCreateParams.Builder chat(long maxTokens) {
        return ChatCompletionCreateParams.builder().model("flotilla-sim").addUserMessage("Hello there").maxCompletionTokens(maxTokens);
    }

    @Test
    void chatCompletion() {
        cluster.workerA.behave(FakeWorker.Behaviour.cached(16));
        ChatCompletion completion = client.chat().completions().create(chat(6).temperature(0.0).seed(7L).build());
        assertThat(completion.choices()).hasSize(1);
        assertThat(completion.choices().get(0).message().content()).contains(FakeCluster.expectedText(6));
        assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.LENGTH);
        assertThat(completion.usage().orElseThrow().completionTokens()).isEqualTo(6);
        assertThat(completion.usage().orElseThrow().promptTokensDetails().orElseThrow().cachedTokens()).contains(16L);
        assertThat(completion.model()).isEqualTo("flotilla-sim");
    }

    @Test
    void embeddings() {
        CreateEmbeddingResponse response = client.embeddings().create(EmbeddingCreateParams.builder()
                .model("flotilla-sim").inputOfArrayOfStrings(List.of("The food was delicious", "and the waiter..."))
                .build());
        assertThat(response.data()).hasSize(2);
        int[] second = FakeCluster.TOKENIZER.encode("and the waiter...");
        float[] expected = FakeWorker.embedding(second, FakeWorker.EMBEDDING_DIMENSIONS);
        List<Float> got = response.data().get(1).embedding();
        assertThat(response.data().get(1).index()).isEqualTo(1);
        assertThat(got).hasSize(expected.length);
        for (int i = 0; i < expected.length; i++) {
            assertThat(got.get(i)).isEqualTo(expected[i]);
        }
        assertThat(response.model()).isEqualTo("flotilla-sim");
        assertThat(response.usage().promptTokens())
                .isEqualTo(FakeCluster.TOKENIZER.encode("The food was delicious").length + second.length);

        assertThatThrownBy(() -> client.embeddings().create(EmbeddingCreateParams.builder().model("tiny-model")
                .input("x").dimensions(4).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> assertThat(e.param()).contains("dimensions"));
    }

    @Test
    void textCompletion() {
        Completion completion = client.completions().create(CompletionCreateParams.builder()
                .model("flotilla-sim").prompt("Once upon a time").maxTokens(5).build());
        assertThat(completion.choices().get(0).text()).isEqualTo(FakeCluster.expectedText(5));
        assertThat(completion.usage().orElseThrow().completionTokens()).isEqualTo(5);
    }

    @Test
    void streamingChatWithUsage() {
        StringBuilder text = new StringBuilder();
        List<ChatCompletionChunk> chunks = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(chat(25)
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
            stream.stream().forEach(c -> {
                chunks.add(c);
                c.choices().forEach(choice -> choice.delta().content().ifPresent(text::append));
            });
        }
        assertThat(text.toString()).isEqualTo(FakeCluster.expectedText(25));
        ChatCompletionChunk last = chunks.get(chunks.size() - 1);
        assertThat(last.choices()).isEmpty();
        assertThat(last.usage().orElseThrow().completionTokens()).isEqualTo(25);
        assertThat(chunks.get(chunks.size() - 2).choices().get(0).finishReason())
                .contains(ChatCompletionChunk.Choice.FinishReason.LENGTH);
    }

    @Test
    void listModels() {
        assertThat(client.models().list().data()).extracting(Model::id).contains("flotilla-sim").doesNotContain("ghost-model");
        assertThat(client.models().retrieve("flotilla-sim").ownedBy()).isEqualTo("flotilla");
    }

    @Test
    void badRequestNamesTheParameter() {
        assertThatThrownBy(() -> client.chat().completions().create(chat(5).temperature(3.0).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(400);
                    assertThat(e.param()).contains("temperature");
                    assertThat(e.type()).contains("invalid_request_error");
                });
        assertThatThrownBy(() -> client.chat().completions().create(chat(5).n(200L).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> assertThat(e.param()).contains("n"));
    }

    @Test
    void unknownModelIsNotFound() {
        assertThatThrownBy(() -> client.chat().completions().create(chat(5).model("no-such-model").build()))
                .isInstanceOfSatisfying(NotFoundException.class, e -> {
                    assertThat(e.code()).contains("model_not_found");
                    assertThat(e.param()).contains("model");
                });
        assertThatThrownBy(() -> client.models().retrieve("no-such-model")).isInstanceOf(NotFoundException.class);
    }

    @Test
    void neverAnUnprocessableEntityForAnOrdinaryRequest() {
        assertThatThrownBy(() -> client.completions().create(CompletionCreateParams.builder()
                .model("flotilla-sim").prompt("x").maxTokens(5).echo(true).build()))
                .isInstanceOf(BadRequestException.class)
                .isNotInstanceOf(UnprocessableEntityException.class);
    }
}
