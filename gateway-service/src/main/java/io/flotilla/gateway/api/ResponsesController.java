package io.flotilla.gateway.api;

import io.flotilla.gateway.generation.GenerationJob;
import io.flotilla.gateway.generation.GenerationPipeline;
import io.flotilla.gateway.generation.RequestContext;
import io.flotilla.gateway.generation.RequestEvent;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.output.ChoiceResult;
import io.flotilla.gateway.output.OutputEvent;
import io.flotilla.gateway.output.ResponseAssembler;
import io.flotilla.gateway.responses.ResponseEvents;
import io.flotilla.gateway.responses.ResponseObjects;
import io.flotilla.gateway.responses.ResponseStore;
import io.flotilla.gateway.responses.ResponsesMetrics;
import io.flotilla.gateway.responses.ResponsesRequest;
import io.flotilla.gateway.responses.ResponsesRequestParser;
import io.flotilla.gateway.responses.StoredResponse;
import io.flotilla.gateway.responses.StoredResponses;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * OpenAI's Responses API. {@code POST /v1/responses} is served by the same intake and pipeline as
 * {@code /v1/chat/completions}: the body (and, with {@code previous_response_id}, the stored conversation it
 * continues) becomes the chat request that endpoint would build, so routing, flow control, limits and tenancy
 * are the same; the output is written as a {@code response} object or OpenAI's typed event stream
 * ({@link ResponseEvents}). A follow-up names the previous turn's worker to the router as the
 * {@code previous_worker} hint; the router prices it like any candidate (its KV from the index), and where the
 * turn ran is counted. {@code GET}/{@code DELETE /v1/responses/{id}} and {@code GET …/input_items} read the store,
 * where a response belongs to the API key that made it: to any other key it is unknown (404).
 */
@RestController
class ResponsesController {

    static final String ENDPOINT = "/v1/responses";
    /** The route hint naming the worker that served the previous turn of the conversation. */
    static final String PREVIOUS_WORKER_HINT = "previous_worker";

    private static final Logger log = LoggerFactory.getLogger(ResponsesController.class);

    private record Parsed(ResponsesRequest request, String owner) {
    }

    private final ResponsesRequestParser parser;
    private final GenerationIntake intake;
    private final GenerationPipeline pipeline;
    private final GatewayMetrics metrics;
    private final ResponsesMetrics responsesMetrics;
    private final StoredResponses stored;
    private final JsonMapper json;
    private final Clock clock;

    ResponsesController(JsonMapper json, GenerationIntake intake, GenerationPipeline pipeline, GatewayMetrics metrics,
                        ResponsesMetrics responsesMetrics, ResponseStore store, Clock clock) {
        this.json = json;
        this.parser = new ResponsesRequestParser(json);
        this.intake = intake;
        this.pipeline = pipeline;
        this.metrics = metrics;
        this.responsesMetrics = responsesMetrics;
        this.stored = new StoredResponses(store, responsesMetrics, json);
        this.clock = clock;
    }

    @PostMapping(ENDPOINT)
    Mono<Void> create(ServerWebExchange exchange) {
        return intake.serveLooked(exchange, ENDPOINT, (body, key) -> {
            String owner = StoredResponses.owner(key);
            String previousId = ResponsesRequestParser.previousResponseId(body);
            String items = UUID.randomUUID().toString().replace("-", "");
            Mono<StoredResponse> previous = previousId == null ? Mono.empty()
                    : stored.get(owner, previousId).switchIfEmpty(Mono.error(() -> new ApiError(404,
                            ApiError.INVALID_REQUEST, "previous_response_id", null,
                            "Previous response with id '" + previousId + "' not found.", null)));
            return previous.map(p -> new Parsed(parser.parse(body, items, p), owner))
                    .switchIfEmpty(Mono.fromCallable(() -> new Parsed(parser.parse(body, items, null), owner)));
        }, p -> p.request().completion(), this::respond);
    }

    @GetMapping(ENDPOINT + "/{id}")
    Mono<Void> retrieve(ServerWebExchange exchange, @PathVariable String id) {
        return owner(exchange).flatMap(owner -> {
            StoredResponses.checkRetrieveParams(exchange.getRequest().getQueryParams());
            return stored.get(owner, id).switchIfEmpty(Mono.error(() -> StoredResponses.notFound(id)));
        }).flatMap(r -> write(exchange, r.response().getBytes(StandardCharsets.UTF_8)));
    }

    @DeleteMapping(ENDPOINT + "/{id}")
    Mono<Void> delete(ServerWebExchange exchange, @PathVariable String id) {
        return owner(exchange).flatMap(owner -> stored.delete(owner, id)).flatMap(deleted -> {
            if (!deleted) {
                return Mono.error(StoredResponses.notFound(id));
            }
            ObjectNode body = json.createObjectNode().put("id", id).put("object", "response.deleted").put("deleted", true);
            return write(exchange, json.writeValueAsBytes(body));
        });
    }

    @GetMapping(ENDPOINT + "/{id}/input_items")
    Mono<Void> inputItems(ServerWebExchange exchange, @PathVariable String id) {
        return owner(exchange).flatMap(owner -> {
            StoredResponses.Page page = StoredResponses.page(exchange.getRequest().getQueryParams());
            return stored.get(owner, id).switchIfEmpty(Mono.error(() -> StoredResponses.notFound(id)))
                    .map(r -> stored.inputItems(r, page));
        }).flatMap(list -> write(exchange, json.writeValueAsBytes(list)));
    }

    private static Mono<String> owner(ServerWebExchange exchange) {
        return exchange.getPrincipal().map(Principal::getName).defaultIfEmpty("").map(StoredResponses::owner);
    }

    private static Mono<Void> write(ServerWebExchange exchange, byte[] body) {
        ServerHttpResponse response = exchange.getResponse();
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    private Mono<Void> respond(ServerWebExchange exchange, RequestContext ctx, Parsed parsed) {
        ResponsesRequest request = parsed.request();
        GenerationJob job = ctx.job();
        if (request.previous() != null && !request.previous().worker().isEmpty()) {
            ctx.on(new RequestEvent.Hinted(Map.of(PREVIOUS_WORKER_HINT, request.previous().worker())));
        }
        ResponseObjects objects = new ResponseObjects(json, ctx.requestId(), clock.instant().getEpochSecond(),
                job.requestedModel(), request.echo());
        ResponseAssembler assembler = job.response().assembler();
        Flux<OutputEvent> output = CompletionResponder.output(pipeline, metrics, ctx, assembler);
        return request.completion().stream() ? stream(exchange, ctx, parsed, objects, assembler, output)
                : whole(exchange, ctx, parsed, objects, assembler, output);
    }

    private Mono<Void> whole(ServerWebExchange exchange, RequestContext ctx, Parsed parsed, ResponseObjects objects,
                             ResponseAssembler assembler, Flux<OutputEvent> output) {
        return output.then(Mono.defer(() -> {
            ChoiceResult choice = assembler.results().get(0);
            ctx.on(new RequestEvent.Responded(choice.finishReason()));
            TokenUsage usage = CompletionResponder.usage(ctx, assembler);
            ObjectNode response = objects.response(ResponseObjects.status(choice.finishReason()), objects.output(choice),
                    usage, clock.instant().getEpochSecond(), null);
            followup(ctx, parsed.request(), usage);
            return keep(ctx, parsed, response).then(Mono.defer(() ->
                    CompletionResponder.writeJson(exchange, ctx, json.writeValueAsBytes(response))));
        }));
    }

    private Mono<Void> stream(ServerWebExchange exchange, RequestContext ctx, Parsed parsed, ResponseObjects objects,
                              ResponseAssembler assembler, Flux<OutputEvent> output) {
        ResponseEvents events = new ResponseEvents(json, objects);
        Flux<ResponseEvents.Event> body = output
                .concatMap(e -> {
                    List<ResponseEvents.Event> out = new ArrayList<>(4);
                    if (!events.started()) {
                        ctx.on(new RequestEvent.ResponseStarted());
                        out.addAll(events.start());
                    }
                    if (e instanceof OutputEvent.Delta d) {
                        out.addAll(events.delta(d));
                    } else if (e instanceof OutputEvent.Done done) {
                        ctx.on(new RequestEvent.Responded(done.finishReason()));
                        TokenUsage usage = CompletionResponder.usage(ctx, assembler);
                        List<ResponseEvents.Event> last = events.done(done.finishReason(), usage,
                                clock.instant().getEpochSecond());
                        followup(ctx, parsed.request(), usage);
                        // stored before the client hears it is complete, so a follow-up sent at once finds it
                        return keep(ctx, parsed, events.finalResponse())
                                .thenMany(Flux.concat(Flux.fromIterable(out), Flux.fromIterable(last)));
                    }
                    return Flux.fromIterable(out);
                })
                .onErrorResume(e -> {
                    ApiError error = CompletionResponder.streamedError(ctx, e);
                    return error == null ? Flux.error(e) : Flux.just(events.failed(error));
                });
        return CompletionResponder.writeEvents(exchange, ctx, body.map(event -> event.sse(json)));
    }

    /**
     * Stores the finished response with its conversation, when the client asked to. A response the store could not
     * keep is still returned (it is generated and paid for); the failure is logged and counted, and a follow-up
     * naming it gets 404.
     */
    private Mono<Void> keep(RequestContext ctx, Parsed parsed, ObjectNode response) {
        ResponsesRequest request = parsed.request();
        if (!request.store()) {
            return Mono.empty();
        }
        String conversation = json.writeValueAsString(json.createArrayNode().addAll(request.conversation()));
        StoredResponse record = new StoredResponse(response.get("id").stringValue(), parsed.owner(),
                ctx.result().worker(), json.writeValueAsString(response), conversation);
        return stored.put(record).onErrorResume(e -> {
            log.warn("request {}: response {} not stored: {}", ctx.requestId(), record.id(), e.toString());
            return Mono.empty();
        });
    }

    /** Where a follow-up ran against the worker of its previous turn, and what of its prompt was cached. */
    private void followup(RequestContext ctx, ResponsesRequest request, TokenUsage usage) {
        if (request.previous() == null) {
            return;
        }
        String previousWorker = request.previous().worker();
        String outcome = !previousWorker.isEmpty() && previousWorker.equals(ctx.result().worker()) ? "same_worker" : "moved";
        responsesMetrics.followup(ctx.job().model(), outcome, usage.promptTokens(), usage.cachedTokens());
    }
}
