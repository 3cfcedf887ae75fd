package io.flotilla.gateway.responses;

import io.flotilla.gateway.openai.CompletionRequest;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.List;

/**
 * A validated {@code POST /v1/responses}.
 *
 * @param completion   the chat request the generation pipeline serves: the whole conversation (the previous
 *                     response's input and output, then this input) after {@code instructions}
 * @param input        this request's input items, canonical, with ids
 * @param conversation every input item of this response: the previous response's input items and output, then
 *                     {@code input} ({@code input_items} lists these; a follow-up of this response starts from them)
 * @param echo         the request fields a response object repeats (instructions, tools, text, metadata, …),
 *                     as the client sent them or null
 * @param store        keep the response for retrieval and follow-ups (OpenAI's default: true)
 * @param previous     the response this one continues, or null
 */
public record ResponsesRequest(CompletionRequest completion, List<JsonNode> input, List<JsonNode> conversation,
                               ObjectNode echo, boolean store, StoredResponse previous) {

    public ResponsesRequest {
        input = List.copyOf(input);
        conversation = List.copyOf(conversation);
    }
}
