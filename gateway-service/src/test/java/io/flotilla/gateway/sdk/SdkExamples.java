package io.flotilla.gateway.sdk;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionTokenLogprob;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import com.openai.models.chat.completions.StructuredChatCompletionCreateParams;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The official Java SDK's examples — function calling, function calling streamed through the SDK's
 * {@link ChatCompletionAccumulator}, structured outputs from a class, log-probabilities — written as
 * the SDK's README and examples write them, with only the base URL and model changed. Shared by the
 * gateway's SDK tests (fake workers) and the whole-cluster tests (scripted simulated engines, fake
 * vLLM engines), which script the model's answers with the constants here.
 */
public final class SdkExamples {

    /** The function-calling example's question; script rules key on it. */
    public static final String QUESTION = "How good are the following SDKs and what do reviewers say: "
            + "OpenAI Java SDK, Unknown Company SDK.";
    /** Text of a tool result the example sends back; a script rule keys on it for the final answer. */
    public static final String TOOL_RESULT_MARK = "robust and polished";
    public static final String FINAL_ANSWER = "The OpenAI Java SDK is robust and polished; the Unknown Company SDK gets a shrug.";
    /** The model's two calls as Hermes / Qwen write them. */
    public static final String CALLS_HERMES = "Let me look them up.\n"
            + "<tool_call>\n{\"name\": \"GetSdkQuality\", \"arguments\": {\"name\": \"OpenAI Java SDK\"}}\n</tool_call>\n"
            + "<tool_call>\n{\"name\": \"GetSdkQuality\", \"arguments\": {\"name\": \"Unknown Company SDK\"}}\n</tool_call>";
    /** The same calls as Llama 3 writes them. */
    public static final String CALLS_LLAMA3 = "{\"name\": \"GetSdkQuality\", \"parameters\": {\"name\": \"OpenAI Java SDK\"}}; "
            + "{\"name\": \"GetSdkQuality\", \"parameters\": {\"name\": \"Unknown Company SDK\"}}";
    /** A valid answer to the structured-outputs example. */
    public static final String BOOKS_JSON = "{\"books\": [{\"title\": \"Beloved\", \"author\": {\"name\": \"Toni Morrison\","
            + " \"birthYear\": 1931}, \"publicationYear\": 1987}]}";

    private SdkExamples() {
    }

    /** What {@code sdk-examples.test.mjs} needs to know of the script ({@code SDK_EXAMPLES}). */
    public static String nodeEnvironment() {
        return "{\"question\": " + quote(QUESTION) + ", \"finalAnswer\": " + quote(FINAL_ANSWER) + "}";
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    @JsonClassDescription("Gets the quality of the given SDK.")
    public static class GetSdkQuality {
        @JsonPropertyDescription("The name of the SDK.")
        public String name;

        public SdkQuality execute() {
            return new SdkQuality(name, name.contains("OpenAI") ? "It's robust and polished!" : "*shrug*");
        }
    }

    public static class SdkQuality {
        public String quality;
        public String sdk;

        public SdkQuality(String sdk, String quality) {
            this.sdk = sdk;
            this.quality = quality;
        }
    }

    public static class Person {
        public String name;
        @JsonPropertyDescription("The year the person was born, if known.")
        public int birthYear;
    }

    public static class Book {
        public String title;
        public Person author;
        @JsonPropertyDescription("The year the book was first published.")
        public int publicationYear;
    }

    public static class BookList {
        public List<Book> books;
    }

    /**
     * What the function-calling example saw.
     *
     * @param calls       the functions the model called, as the SDK parsed them
     * @param finishReason of the first answer
     * @param answer      the final answer, after the tool results went back
     */
    public record FunctionCalling(List<ChatCompletionMessageFunctionToolCall> calls, ChatCompletion.Choice.FinishReason finishReason,
                                  String answer) {
    }

    /** The SDK's function-calling example: call the tools the model asks for, send the results back, read the answer. */
    public static FunctionCalling functionCalling(OpenAIClient client, String model) {
        ChatCompletionCreateParams.Builder createParamsBuilder = ChatCompletionCreateParams.builder()
                .model(model)
                .maxCompletionTokens(2048)
                .addTool(GetSdkQuality.class)
                .addUserMessage(QUESTION);
        List<ChatCompletionMessageFunctionToolCall> calls = new ArrayList<>();
        ChatCompletion first = client.chat().completions().create(createParamsBuilder.build());
        first.choices().stream()
                .map(ChatCompletion.Choice::message)
                .peek(createParamsBuilder::addMessage)
                .flatMap(message -> message.toolCalls().stream().flatMap(Collection::stream))
                .map(ChatCompletionMessageToolCall::asFunction)
                .forEach(toolCall -> {
                    calls.add(toolCall);
                    Object result = toolCall.function().arguments(GetSdkQuality.class).execute();
                    createParamsBuilder.addMessage(ChatCompletionToolMessageParam.builder()
                            .toolCallId(toolCall.id())
                            .contentAsJson(result)
                            .build());
                });
        String answer = client.chat().completions().create(createParamsBuilder.build()).choices().stream()
                .flatMap(choice -> choice.message().content().stream())
                .findFirst().orElse(null);
        return new FunctionCalling(calls, first.choices().get(0).finishReason(), answer);
    }

    /** Function calling streamed, the chunks accumulated by the SDK into a whole completion. */
    public static ChatCompletion streamingFunctionCalling(OpenAIClient client, String model) {
        ChatCompletionCreateParams createParams = ChatCompletionCreateParams.builder()
                .model(model)
                .maxCompletionTokens(2048)
                .addTool(GetSdkQuality.class)
                .addUserMessage(QUESTION)
                .build();
        ChatCompletionAccumulator chatCompletionAccumulator = ChatCompletionAccumulator.create();
        try (StreamResponse<ChatCompletionChunk> streamResponse = client.chat().completions().createStreaming(createParams)) {
            streamResponse.stream()
                    .peek(chatCompletionAccumulator::accumulate)
                    .flatMap(completion -> completion.choices().stream())
                    .flatMap(choice -> choice.delta().content().stream())
                    .forEach(content -> { });
        }
        return chatCompletionAccumulator.chatCompletion();
    }

    /** The SDK's structured-outputs example: a JSON schema derived from a class, the answer read back as it. */
    public static List<Book> structuredOutputs(OpenAIClient client, String model) {
        StructuredChatCompletionCreateParams<BookList> createParams = ChatCompletionCreateParams.builder()
                .model(model)
                .maxCompletionTokens(2048)
                .responseFormat(BookList.class)
                .addUserMessage("List some famous late twentieth century novels.")
                .build();
        return client.chat().completions().create(createParams).choices().stream()
                .flatMap(choice -> choice.message().content().stream())
                .flatMap(bookList -> bookList.books.stream())
                .toList();
    }

    /** Log-probabilities of each token of an answer, with the two most likely alternatives. */
    public static List<ChatCompletionTokenLogprob> logprobs(OpenAIClient client, String model) {
        ChatCompletionCreateParams createParams = ChatCompletionCreateParams.builder()
                .model(model)
                .maxCompletionTokens(8)
                .logprobs(true)
                .topLogprobs(2L)
                .addUserMessage("Say something")
                .build();
        return client.chat().completions().create(createParams).choices().get(0).logprobs().orElseThrow()
                .content().orElseThrow();
    }
}
