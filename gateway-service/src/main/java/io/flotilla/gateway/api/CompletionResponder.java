package io.flotilla.gateway.api;

import io.flotilla.gateway.generation.GenerationJob;
import io.flotilla.gateway.generation.GenerationPipeline;
import io.flotilla.gateway.generation.RequestContext;
import io.flotilla.gateway.generation.RequestEvent;
import io.flotilla.gateway.generation.RequestResult;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.output.ChoiceResult;
import io.flotilla.gateway.output.OutputEvent;
import io.flotilla.gateway.output.ResponseAssembler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Writes a generation's output as an OpenAI response: server-sent events when streaming, one JSON
 * object otherwise.
 *
 * <p>Streams: nothing is written (so status and headers stay open) until the first event exists; an
 * error before that becomes an ordinary HTTP error response, an error after it an SSE
 * {@code data: {"error": …}} event followed by {@code data: [DONE]}. The {@code x-flotilla-*} headers
 * are set right before the first event is written. Cancelling the write (client disconnect)
 * cancels the worker call.
 */
final class CompletionResponder {

    private static final Logger log = LoggerFactory.getLogger(CompletionResponder.class);
    static final MediaType EVENT_STREAM = new MediaType("text", "event-stream", StandardCharsets.UTF_8);

    private final GenerationPipeline pipeline;
    private final JsonMapper json;
    private final Clock clock;
    private final GatewayMetrics metrics;

    CompletionResponder(GenerationPipeline pipeline, JsonMapper json, Clock clock, GatewayMetrics metrics) {
        this.pipeline = pipeline;
        this.json = json;
        this.clock = clock;
        this.metrics = metrics;
    }

    Mono<Void> respond(ServerWebExchange exchange, RequestContext ctx, CompletionRequest request) {
        GenerationJob job = ctx.job();
        ResponseRenderer renderer = new ResponseRenderer(json, request.kind(), request.kind().idPrefix() + ctx.requestId(),
                clock.instant().getEpochSecond(), job.requestedModel(), job.choices(), request.includeUsage());
        ResponseAssembler assembler = job.response().assembler();
        Flux<OutputEvent> output = output(pipeline, metrics, ctx, assembler);
        return request.stream() ? stream(exchange, ctx, request, renderer, assembler, output)
                : whole(exchange, ctx, renderer, assembler, output);
    }

    /** The request's output as the client sees it, through {@code assembler}, ending with {@link OutputEvent.End}. */
    static Flux<OutputEvent> output(GenerationPipeline pipeline, GatewayMetrics metrics, RequestContext ctx,
                                    ResponseAssembler assembler) {
        GenerationJob job = ctx.job();
        return pipeline.run(job, ctx)
                .concatMapIterable(assembler::apply)
                .takeUntil(e -> e instanceof OutputEvent.End)
                .doOnComplete(() -> metrics.output(job.model(), assembler.toolCalls(), assembler.malformedToolOutputs(),
                        assembler.reasoningTokens()))
                .doOnCancel(() -> ctx.on(new RequestEvent.Abandoned())); // the client went away (takeUntil completes, never cancels)
    }

    private Mono<Void> stream(ServerWebExchange exchange, RequestContext ctx, CompletionRequest request,
                              ResponseRenderer renderer, ResponseAssembler assembler, Flux<OutputEvent> output) {
        AtomicBoolean started = new AtomicBoolean();
        boolean[] roleSent = new boolean[ctx.job().choices()];
        boolean chat = request.kind() == CompletionKind.CHAT;
        Flux<String> events = output
                .concatMapIterable(e -> {
                    if (started.compareAndSet(false, true)) {
                        ctx.on(new RequestEvent.ResponseStarted());
                    }
                    List<String> out = new ArrayList<>(4);
                    if (e instanceof OutputEvent.Delta d) {
                        role(out, renderer, roleSent, d.choice(), chat);
                        out.add(renderer.deltaChunk(d));
                    } else if (e instanceof OutputEvent.Done done) {
                        role(out, renderer, roleSent, done.choice(), chat);
                        if (done.choice() == 0) {
                            ctx.on(new RequestEvent.Responded(done.finishReason()));
                        }
                        out.add(renderer.finishChunk(done.choice(), done.finishReason()));
                    } else if (e instanceof OutputEvent.End) {
                        if (request.includeUsage()) {
                            out.add(renderer.usageChunk(usage(ctx, assembler)));
                        }
                        out.add("[DONE]");
                    }
                    return out;
                })
                .onErrorResume(e -> {
                    ApiError error = streamedError(ctx, e);
                    return error == null ? Flux.error(e) : Flux.just(ResponseRenderer.errorBody(json, error), "[DONE]");
                });
        return writeEvents(exchange, ctx, events.map(payload -> "data: " + payload + "\n\n"));
    }

    /**
     * Writes a stream of server-sent events, each flushed as it comes ({@code frames}: whole events, blank line
     * included). The headers (event stream, no caching or proxy buffering, the {@code x-flotilla-*} ones) are set
     * right before the first event, so an error before it is still an ordinary HTTP error response. Shared by every
     * streaming API.
     */
    static Mono<Void> writeEvents(ServerWebExchange exchange, RequestContext ctx, Flux<String> frames) {
        ServerHttpResponse response = exchange.getResponse();
        AtomicBoolean headersSet = new AtomicBoolean();
        Flux<DataBuffer> body = frames.map(frame -> {
            if (headersSet.compareAndSet(false, true)) {
                HttpHeaders headers = response.getHeaders();
                headers.setContentType(EVENT_STREAM);
                headers.setCacheControl("no-cache");
                headers.set("X-Accel-Buffering", "no");
                workerHeaders(headers, ctx, ctx.result().streamWorker());
            }
            return response.bufferFactory().wrap(frame.getBytes(StandardCharsets.UTF_8));
        });
        return response.writeAndFlushWith(body.map(Flux::just));
    }

    /** Writes a whole JSON response with the {@code x-flotilla-*} headers. Shared by every API. */
    static Mono<Void> writeJson(ServerWebExchange exchange, RequestContext ctx, byte[] body) {
        ServerHttpResponse response = exchange.getResponse();
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        workerHeaders(response.getHeaders(), ctx, ctx.result().worker());
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /**
     * The error a stream that has already started reports in-band for {@code e}, recorded on the request; null when
     * nothing was sent yet, so the failure can still be an ordinary error response. Shared by every streaming API.
     */
    static ApiError streamedError(RequestContext ctx, Throwable e) {
        if (!ctx.result().responseStarted()) {
            return null;
        }
        ApiError error = e instanceof ApiError api ? api
                : ApiError.badGateway("stream_failed", "The stream failed: " + e.getMessage());
        if (!(e instanceof ApiError)) {
            log.warn("request {}: stream failed after it started", ctx.requestId(), e);
        }
        ctx.on(new RequestEvent.StreamedError(error));
        return error;
    }

    /** Chat streams open each choice with a chunk naming the assistant role. */
    private static void role(List<String> out, ResponseRenderer renderer, boolean[] sent, int choice, boolean chat) {
        if (chat && !sent[choice]) {
            sent[choice] = true;
            out.add(renderer.roleChunk(choice));
        }
    }

    private Mono<Void> whole(ServerWebExchange exchange, RequestContext ctx, ResponseRenderer renderer,
                             ResponseAssembler assembler, Flux<OutputEvent> output) {
        return output.then(Mono.defer(() -> {
            List<ChoiceResult> choices = assembler.results();
            ctx.on(new RequestEvent.Responded(choices.get(0).finishReason()));
            return writeJson(exchange, ctx, renderer.completion(choices, usage(ctx, assembler))
                    .getBytes(StandardCharsets.UTF_8));
        }));
    }

    static void workerHeaders(HttpHeaders headers, RequestContext ctx, String worker) {
        RequestResult r = ctx.result();
        headers.set(ResponseHeaders.REQUEST_ID, ctx.requestId());
        if (!worker.isEmpty()) {
            headers.set(ResponseHeaders.WORKER, worker);
        }
        if (!r.prefillWorker().isEmpty()) {
            headers.set(ResponseHeaders.PREFILL_WORKER, r.prefillWorker());
        }
        if (r.mode() != null) {
            headers.set(ResponseHeaders.MODE, GatewayMetrics.modeTag(r.mode()));
        }
        if (r.queueWait() != null) {
            headers.set(ResponseHeaders.QUEUE_MS, Long.toString(r.queueWait().toMillis()));
        }
    }

    static TokenUsage usage(RequestContext ctx, ResponseAssembler assembler) {
        int prompt = ctx.job().promptTokens().length;
        RequestResult p = ctx.result();
        return new TokenUsage(prompt, p.generatedCount(), p.cachedTokens(prompt), assembler.reasoningTokens());
    }
}
