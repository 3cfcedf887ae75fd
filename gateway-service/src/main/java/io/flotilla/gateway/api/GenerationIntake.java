package io.flotilla.gateway.api;

import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.flow.FlowRejected;
import io.flotilla.gateway.flow.FlowRequest;
import io.flotilla.gateway.flow.PrefixMemory;
import io.flotilla.gateway.generation.FlowRejections;
import io.flotilla.gateway.generation.GenerationJob;
import io.flotilla.gateway.generation.JobFactory;
import io.flotilla.gateway.generation.RequestAccounting;
import io.flotilla.gateway.generation.RequestContext;
import io.flotilla.gateway.generation.RequestEvent;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionRequest;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.util.function.Tuples;
import tools.jackson.databind.JsonNode;

import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The way in of every generation endpoint, whatever its API: read and validate the body, resolve and
 * tokenize the chat or text request the endpoint's parser made of it, place it in flow control (band,
 * flow, cost, deadline), then hand it to the endpoint's responder, which serves it through the
 * generation pipeline and writes the endpoint's shapes. Every request, however it ends, is accounted
 * once, under its endpoint.
 */
final class GenerationIntake {

    /** Writes one admitted request's response; {@code ctx.job()} is set. */
    interface Responder<R> {
        Mono<Void> respond(ServerWebExchange exchange, RequestContext ctx, R request);
    }

    private final RequestBodies bodies;
    private final JobFactory jobs;
    private final FlowController flow;
    private final FlowPolicy policy;
    private final PrefixMemory prefixes;
    private final RequestAccounting accounting;
    private final Clock clock;

    GenerationIntake(RequestBodies bodies, JobFactory jobs, FlowController flow, FlowPolicy policy, PrefixMemory prefixes,
                     RequestAccounting accounting, Clock clock) {
        this.bodies = bodies;
        this.jobs = jobs;
        this.flow = flow;
        this.policy = policy;
        this.prefixes = prefixes;
        this.accounting = accounting;
        this.clock = clock;
    }

    /**
     * @param endpoint   the request path, as the metrics' {@code endpoint} tag
     * @param parse      the endpoint's parser (400s naming what is wrong)
     * @param completion the internal request the pipeline serves, of what {@code parse} made
     */
    <R> Mono<Void> serve(ServerWebExchange exchange, String endpoint, Function<JsonNode, R> parse,
                         Function<R, CompletionRequest> completion, Responder<R> responder) {
        return serveLooked(exchange, endpoint, (body, key) -> Mono.fromCallable(() -> parse.apply(body)), completion,
                responder);
    }

    /**
     * As {@link #serve}, for an endpoint whose parse must look something up first (a stored conversation the body
     * names): {@code parse} gets the body and the caller's API key ("" when the gateway is open).
     */
    <R> Mono<Void> serveLooked(ServerWebExchange exchange, String endpoint, BiFunction<JsonNode, String, Mono<R>> parse,
                               Function<R, CompletionRequest> completion, Responder<R> responder) {
        RequestContext ctx = new RequestContext(UUID.randomUUID().toString().replace("-", ""), clock.instant(), endpoint);
        long arrivedNanos = flow.nowNanos();
        HttpHeaders headers = exchange.getRequest().getHeaders();
        return Mono.fromCallable(() -> disaggAllowed(exchange))
                .flatMap(disagg -> bodies.readJson(exchange.getRequest())
                .zipWith(exchange.getPrincipal().map(Principal::getName).defaultIfEmpty(""))
                .flatMap(t -> parse.apply(t.getT1(), t.getT2()).map(parsed -> Tuples.of(parsed, t.getT2())))
                .flatMap(t -> {
                    R parsed = t.getT1();
                    CompletionRequest request = completion.apply(parsed);
                    String key = t.getT2();
                    String tenant = request.user() != null && !request.user().isBlank() ? request.user()
                            : key.isEmpty() ? "anonymous" : key;
                    String flowId = key.isEmpty() ? tenant : key; // a key's users share its fair share
                    ctx.on(new RequestEvent.Identified(tenant, flowId,
                            policy.priority(flowId, headers.getFirst(ResponseHeaders.PRIORITY)), jobs.modelOf(request)));
                    return jobs.prepare(request, ctx.requestId(), key, tenant, disagg)
                            .doOnNext(job -> {
                                ctx.on(new RequestEvent.Resolved(job));
                                ctx.on(new RequestEvent.Placed(flowRequest(ctx, job, flowId, arrivedNanos, headers)));
                            })
                            .then(Mono.defer(() -> responder.respond(exchange, ctx, parsed)));
                }))
                // the policy's refusals of the request's flow-control headers; shed requests are mapped by the pipeline
                .onErrorMap(FlowRejected.class, e -> FlowRejections.toApiError(null, e, null))
                .doOnError(e -> ctx.on(new RequestEvent.Failed(e)))
                .transform(response -> accounting.endWhenDone(ctx, response));
    }

    /** The request as flow control sees it; its deadline counts from arrival, not from the end of tokenization. */
    private FlowRequest flowRequest(RequestContext ctx, GenerationJob job, String flowId, long arrivedNanos,
                                    HttpHeaders headers) {
        Duration timeout = policy.queueTimeout(headers.getFirst(ResponseHeaders.QUEUE_TIMEOUT),
                flow.limits(job.model()).queueTimeout(), headers.getFirst(ResponseHeaders.CLIENT_TIMEOUT));
        long cost = prefixes.cost(ctx.promptHashes(), job.hasher().blockSize(), job.promptTokens().length,
                job.maxTokens() * job.choices()); // n choices decode n outputs on one prefill
        return new FlowRequest(ctx.requestId(), job.model(), ctx.priority(), flowId, cost,
                arrivedNanos + Math.min(timeout.toNanos(), Long.MAX_VALUE / 4));
    }

    /** {@code x-flotilla-disagg}: absent or {@code auto} leaves the choice to the router, {@code off} forbids it. */
    private static boolean disaggAllowed(ServerWebExchange exchange) {
        String hint = exchange.getRequest().getHeaders().getFirst(ResponseHeaders.DISAGG);
        if (hint == null || hint.equalsIgnoreCase("auto")) {
            return true;
        }
        if (hint.equalsIgnoreCase("off")) {
            return false;
        }
        throw ApiError.invalid(null, "Invalid header '" + ResponseHeaders.DISAGG + "': '" + hint
                + "'. Expected 'off' or 'auto'.");
    }
}
