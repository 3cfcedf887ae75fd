package io.flotilla.gateway.api;

import io.flotilla.gateway.generation.GenerationPipeline;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.RequestParser;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import java.time.Clock;
import java.util.function.Function;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/completions}: OpenAI's request parsed, admitted by
 * the {@link GenerationIntake} and written in OpenAI's shapes by the {@link CompletionResponder}.
 */
@RestController
class CompletionsController {

    private final RequestParser parser = new RequestParser();
    private final GenerationIntake intake;
    private final CompletionResponder responder;

    CompletionsController(JsonMapper json, GenerationIntake intake, GenerationPipeline pipeline, GatewayMetrics metrics,
                          Clock clock) {
        this.intake = intake;
        this.responder = new CompletionResponder(pipeline, json, clock, metrics);
    }

    @PostMapping("/v1/chat/completions")
    Mono<Void> chat(ServerWebExchange exchange) {
        return serve(exchange, "/v1/chat/completions", CompletionKind.CHAT);
    }

    @PostMapping("/v1/completions")
    Mono<Void> completions(ServerWebExchange exchange) {
        return serve(exchange, "/v1/completions", CompletionKind.TEXT);
    }

    private Mono<Void> serve(ServerWebExchange exchange, String endpoint, CompletionKind kind) {
        return intake.serve(exchange, endpoint, body -> parser.parse(kind, body), Function.<CompletionRequest>identity(),
                responder::respond);
    }
}
