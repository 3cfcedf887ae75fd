package io.flotilla.gateway.sdk;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionTokenLogprob;
import io.flotilla.gateway.GatewayTestBase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The official Java SDK's typed examples ({@link SdkExamples}) against the gateway, with strict
 * response validation, the fake worker playing the model: it answers the function-calling question
 * with two Hermes calls, the follow-up with the final answer, and a structured-output request with
 * JSON of the class's schema.
 */
class OpenAiSdkExamplesTest extends GatewayTestBase {

    private OpenAIClient client;

    @BeforeEach
    void client() {
        client = OpenAIOkHttpClient.builder().baseUrl(baseUrl() + "/v1").apiKey("unused").maxRetries(0)
                .responseValidation(true).build();
        cluster.workerA.replyBy((prompt, request) -> request.getSampling().hasStructuredOutput() ? SdkExamples.BOOKS_JSON
                : prompt.contains(SdkExamples.TOOL_RESULT_MARK) ? SdkExamples.FINAL_ANSWER
                : prompt.contains(SdkExamples.QUESTION) ? SdkExamples.CALLS_HERMES : null);
    }

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void functionCalling() {
        SdkExamples.FunctionCalling run = SdkExamples.functionCalling(client, "flotilla-sim");
        assertThat(run.calls()).extracting(c -> c.function().name()).containsExactly("GetSdkQuality", "GetSdkQuality");
        assertThat(run.calls()).extracting(c -> c.function().arguments(SdkExamples.GetSdkQuality.class).name)
                .containsExactly("OpenAI Java SDK", "Unknown Company SDK");
        assertThat(run.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
        assertThat(run.answer()).isEqualTo(SdkExamples.FINAL_ANSWER);
        String secondPrompt = io.flotilla.gateway.fakes.FakeCluster.decode(cluster.workerA.generates.get(1).getTokenIdsList()
                .stream().mapToInt(Integer::intValue).toArray());
        assertThat(secondPrompt).as("the calls and their results went back through the template")
                .contains("<tool_call>\n{\"name\": \"GetSdkQuality\"").contains("<tool_response>");
    }

    @Test
    void streamingFunctionCalling() {
        ChatCompletion accumulated = SdkExamples.streamingFunctionCalling(client, "flotilla-sim");
        List<ChatCompletionMessageFunctionToolCall> calls = accumulated.choices().get(0).message().toolCalls().orElseThrow()
                .stream().map(c -> c.asFunction()).toList();
        assertThat(calls).extracting(c -> c.function().arguments(SdkExamples.GetSdkQuality.class).name)
                .containsExactly("OpenAI Java SDK", "Unknown Company SDK");
        assertThat(calls.get(0).id()).isNotEqualTo(calls.get(1).id());
        assertThat(accumulated.choices().get(0).message().content()).contains("Let me look them up.\n");
        assertThat(accumulated.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
    }

    @Test
    void structuredOutputs() {
        List<SdkExamples.Book> books = SdkExamples.structuredOutputs(client, "flotilla-sim");
        assertThat(books).singleElement().satisfies(b -> {
            assertThat(b.title).isEqualTo("Beloved");
            assertThat(b.author.name).isEqualTo("Toni Morrison");
        });
        String schema = cluster.workerA.generates.get(0).getSampling().getStructuredOutput().getJsonSchema();
        assertThat(schema).as("the class's schema reached the engine").contains("\"books\"").contains("publicationYear");
    }

    @Test
    void logprobs() {
        List<ChatCompletionTokenLogprob> tokens = SdkExamples.logprobs(client, "flotilla-sim");
        assertThat(tokens).hasSize(8).allSatisfy(t -> {
            assertThat(t.logprob()).isEqualTo(-0.25);
            assertThat(t.topLogprobs()).hasSize(2);
            assertThat(t.bytes()).isPresent();
        });
    }
}
