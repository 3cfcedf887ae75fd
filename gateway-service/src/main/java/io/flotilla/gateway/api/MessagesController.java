package io.flotilla.gateway.api;

import io.flotilla.gateway.anthropic.MessageRenderer;
import io.flotilla.gateway.anthropic.MessageStream;
import io.flotilla.gateway.anthropic.MessagesRequest;
import io.flotilla.gateway.anthropic.MessagesRequestParser;
import io.flotilla.gateway.generation.GenerationJob;
import io.flotilla.gateway.generation.GenerationPipeline;
import io.flotilla.gateway.generation.JobFactory;
import io.flotilla.gateway.generation.RequestContext;
import io.flotilla.gateway.generation.RequestEvent;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.output.ChoiceResult;
import io.flotilla.gateway.output.OutputEvent;
import io.flotilla.gateway.output.ResponseAssembler;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.UUID;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code POST /v1/messages}, Anthropic's Messages API, served by the same intake and pipeline as
 * {@code /v1/chat/completions}: the body becomes the chat request that endpoint would build
 * ({@link MessagesRequestParser}), so routing, flow control, limits and tenancy are the same, and the
 * pipeline's output is written as a Messages response — one {@code message} object, or Anthropic's
 * event stream ({@link MessageStream}). Errors are Anthropic's shape (the error handler, by path; a stream
 * that has started ends with an {@code error} event). Nothing is written until the first output exists,
 * so a refusal before it is an ordinary HTTP error. {@code POST /v1/messages/count_tokens} counts the prompt
 * the same translation makes.
 */
@RestController
class MessagesController {

    static final String ENDPOINT = "/v1/messages";

    private final MessagesRequestParser parser = new MessagesRequestParser();
    private final RequestBodies bodies;
    private final JobFactory jobs;
    private final GenerationIntake intake;
    private final GenerationPipeline pipeline;
    private final GatewayMetrics metrics;
    private final JsonMapper json;

    MessagesController(JsonMapper json, RequestBodies bodies, JobFactory jobs, GenerationIntake intake,
                       GenerationPipeline pipeline, GatewayMetrics metrics) {
        this.json = json;
        this.bodies = bodies;
        this.jobs = jobs;
        this.intake = intake;
        this.pipeline = pipeline;
        this.metrics = metrics;
    }

    @PostMapping(ENDPOINT)
    Mono<Void> messages(ServerWebExchange exchange) {
        return intake.serve(exchange, ENDPOINT, parser::parse, MessagesRequest::completion, this::respond);
    }

    /**
     * {@code POST /v1/messages/count_tokens}: {@code {"input_tokens": n}}, the prompt's tokens after the model's
     * chat template with the tools, exactly as {@code /v1/messages} would send them. Nothing is routed.
     */
    @PostMapping(ENDPOINT + "/count_tokens")
    Mono<Void> countTokens(ServerWebExchange exchange) {
        return bodies.readJson(exchange.getRequest())
                .map(parser::parseCountTokens)
                .zipWith(exchange.getPrincipal().map(Principal::getName).defaultIfEmpty(""))
                .flatMap(t -> {
                    String key = t.getT2();
                    return jobs.prepare(t.getT1().completion(), UUID.randomUUID().toString().replace("-", ""), key,
                            key.isEmpty() ? "anonymous" : key, false);
                })
                .flatMap(job -> {
                    byte[] body = json.writeValueAsBytes(json.createObjectNode().put("input_tokens", job.promptTokens().length));
                    ServerHttpResponse response = exchange.getResponse();
                    response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
                    return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
                });
    }

    private Mono<Void> respond(ServerWebExchange exchange, RequestContext ctx, MessagesRequest request) {
        GenerationJob job = ctx.job();
        checkThinking(request.thinking(), job);
        MessageRenderer renderer = new MessageRenderer(json, "msg_" + ctx.requestId(), job.requestedModel());
        ResponseAssembler assembler = job.response().assembler();
        Flux<OutputEvent> output = CompletionResponder.output(pipeline, metrics, ctx, assembler);
        return request.completion().stream() ? stream(exchange, ctx, renderer, assembler, output)
                : whole(exchange, ctx, renderer, assembler, output);
    }

    /**
     * {@code thinking} against what the model does on this request: {@code adaptive} needs a model whose
     * reasoning is split off (a reasoning parser, and no forced tool call), {@code disabled} one without.
     */
    private static void checkThinking(MessagesRequest.Thinking thinking, GenerationJob job) {
        boolean reasons = job.response().reasoning() != null;
        if (thinking == MessagesRequest.Thinking.ADAPTIVE && !reasons) {
            throw ApiError.unsupported("thinking", "thinking: the model '" + job.model() + "' does not think on this "
                    + "request: it has no reasoning parser (flotilla.gateway.models." + job.model() + ".reasoning-parser), "
                    + "or tool_choice forces a tool call.");
        }
        if (thinking == MessagesRequest.Thinking.DISABLED && reasons) {
            throw ApiError.unsupported("thinking", "thinking: the model '" + job.model() + "' thinks as its chat "
                    + "template tells it (reasoning parser '" + job.response().reasoning().name() + "'); this server "
                    + "cannot turn its thinking off. Leave 'thinking' out to get its thinking as thinking blocks.");
        }
    }

    private Mono<Void> stream(ServerWebExchange exchange, RequestContext ctx, MessageRenderer renderer,
                              ResponseAssembler assembler, Flux<OutputEvent> output) {
        MessageStream events = new MessageStream(json, renderer);
        Flux<MessageStream.Event> body = output
                .concatMapIterable(e -> {
                    List<MessageStream.Event> out = new ArrayList<>(4);
                    if (!events.started()) {
                        ctx.on(new RequestEvent.ResponseStarted());
                        out.addAll(events.start(CompletionResponder.usage(ctx, assembler)));
                    }
                    if (e instanceof OutputEvent.Delta d) {
                        out.addAll(events.delta(d));
                    } else if (e instanceof OutputEvent.Done done) {
                        ctx.on(new RequestEvent.Responded(done.finishReason()));
                        out.addAll(events.done(done.finishReason(), assembler.stopString(done.choice()),
                                CompletionResponder.usage(ctx, assembler)));
                    }
                    return out;
                })
                .onErrorResume(e -> {
                    ApiError error = CompletionResponder.streamedError(ctx, e);
                    return error == null ? Flux.error(e) : Flux.just(events.error(error));
                });
        return CompletionResponder.writeEvents(exchange, ctx, body.map(MessageStream.Event::sse));
    }

    private Mono<Void> whole(ServerWebExchange exchange, RequestContext ctx, MessageRenderer renderer,
                             ResponseAssembler assembler, Flux<OutputEvent> output) {
        return output.then(Mono.defer(() -> {
            ChoiceResult choice = assembler.results().get(0);
            ctx.on(new RequestEvent.Responded(choice.finishReason()));
            return CompletionResponder.writeJson(exchange, ctx, renderer.message(choice, assembler.stopString(0),
                    CompletionResponder.usage(ctx, assembler)).getBytes(StandardCharsets.UTF_8));
        }));
    }
}
