package io.flotilla.gateway.api;

import io.flotilla.gateway.client.ModelCatalog;
import io.flotilla.gateway.generation.ModelProfiles;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.TokenizeRequest;
import io.flotilla.gateway.tokenize.IncrementalDetokenizer;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.gateway.tokenize.TemplateRejectedException;
import io.flotilla.gateway.tokenize.Tokenizer;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;

/**
 * {@code POST /tokenize} and {@code POST /detokenize} in vLLM's shapes, with the model's own tokenizer and chat
 * template: the ids are exactly those the gateway sends an engine for the same prompt or messages (and so what its
 * block hashes and {@code usage.prompt_tokens} count). Tokenizing a long text runs off the event loop. Like vLLM's,
 * they sit beside {@code /v1}; they take the same API key when keys are configured. Their counts and latencies are
 * Spring's {@code http_server_requests_seconds{uri="/tokenize"}}.
 */
@RestController
class TokenizeController {

    private final ModelCatalog catalog;
    private final ModelProfiles profiles;
    private final String defaultModel;
    private final JsonMapper json;
    private final RequestBodies bodies;

    TokenizeController(ModelCatalog catalog, ModelProfiles profiles, io.flotilla.gateway.config.GatewayProperties properties,
                       JsonMapper json, RequestBodies bodies) {
        this.catalog = catalog;
        this.profiles = profiles;
        this.defaultModel = properties.defaultModel();
        this.json = json;
        this.bodies = bodies;
    }

    @PostMapping("/tokenize")
    Mono<ResponseEntity<String>> tokenize(ServerWebExchange exchange) {
        return bodies.readJson(exchange.getRequest())
                .map(TokenizeRequest::parse)
                .flatMap(request -> catalog.target(request.model() == null ? defaultModel : request.model())
                        .publishOn(Schedulers.parallel())
                        .map(target -> tokenized(request, target.model().name())))
                .map(this::ok);
    }

    @PostMapping("/detokenize")
    Mono<ResponseEntity<String>> detokenize(ServerWebExchange exchange) {
        return bodies.readJson(exchange.getRequest())
                .map(TokenizeRequest::parseDetokenize)
                .flatMap(request -> catalog.target(request.model() == null ? defaultModel : request.model())
                        .map(target -> detokenized(request.tokens(), profiles.tokenization(target.model().name()).tokenizer())))
                .map(this::ok);
    }

    private ObjectNode tokenized(TokenizeRequest request, String model) {
        ModelTokenization tokenization = profiles.tokenization(model);
        Tokenizer tokenizer = tokenization.tokenizer();
        int[] ids;
        if (request.prompt() != null) {
            ids = request.addSpecialTokens() ? tokenization.textPrompt(request.prompt()) : tokenizer.encode(request.prompt());
        } else {
            try {
                String text = tokenization.template().render(request.messages(), request.tools());
                ids = request.addSpecialTokens() ? tokenizer.encodeWithSpecialTokens(text) : tokenizer.encode(text);
            } catch (TemplateRejectedException e) {
                throw ApiError.invalid("messages", e.getMessage());
            }
        }
        ObjectNode out = json.createObjectNode().put("count", ids.length).put("max_model_len", profiles.maxContext(model));
        ArrayNode tokens = out.putArray("tokens");
        for (int id : ids) {
            tokens.add(id);
        }
        if (request.returnTokenStrs()) {
            ArrayNode strs = out.putArray("token_strs");
            for (int id : ids) {
                byte[] bytes = tokenizer.tokenBytes(id);
                strs.add(bytes == null ? "" : new String(bytes, StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    /** The text of {@code ids} as a response decodes it: a UTF-8 character split across tokens is joined. */
    private ObjectNode detokenized(int[] ids, Tokenizer tokenizer) {
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] >= tokenizer.vocabSize() || tokenizer.tokenBytes(ids[i]) == null) {
                throw ApiError.invalid("tokens", "Invalid 'tokens[" + i + "]': " + ids[i] + " is not a token of this "
                        + "model's vocabulary (" + tokenizer.vocabSize() + " ids).");
            }
        }
        IncrementalDetokenizer text = new IncrementalDetokenizer(tokenizer);
        return json.createObjectNode().put("prompt", text.push(ids) + text.finish());
    }

    private ResponseEntity<String> ok(ObjectNode body) {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(json.writeValueAsString(body));
    }
}
