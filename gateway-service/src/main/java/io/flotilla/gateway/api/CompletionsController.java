package io.flotilla.gateway.api;

import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.flow.FlowRequest;
import io.flotilla.gateway.flow.PrefixMemory;
import io.flotilla.gateway.generation.GenerationJob;
import io.flotilla.gateway.generation.GenerationPipeline;
import io.flotilla.gateway.generation.JobFactory;
import io.flotilla.gateway.generation.RequestAccounting;
import io.flotilla.gateway.generation.RequestContext;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.RequestParser;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/completions}: read and validate the body,
 * resolve and tokenize, place the request in flow control (band, flow, cost, deadline), then serve it
 * through the {@link GenerationPipeline}. Every request, however it ends, is accounted once.
 */
@RestController
class CompletionsController {

    private final RequestBodies bodies;
    private final RequestParser parser = new RequestParser();
    private final JobFactory jobs;
    private final FlowController flow;
    private final FlowPolicy policy;
    private final PrefixMemory prefixes;
    private final CompletionResponder responder;
    private final RequestAccounting accounting;
    private final Clock clock;

    CompletionsController(JsonMapper json, RequestBodies bodies, JobFactory jobs, FlowController flow, FlowPolicy policy,
                          PrefixMemory prefixes, GenerationPipeline pipeline, RequestAccounting accounting,
                          GatewayMetrics metrics, Clock clock) {
        this.bodies = bodies;
        this.jobs = jobs;
        this.flow = flow;
        this.policy = policy;
        this.prefixes = prefixes;
        this.responder = new CompletionResponder(pipeline, json, clock, metrics);
        this.accounting = accounting;
        this.clock = clock;
    }

    @PostMapping("/v1/chat/completions")
    Mono<Void> chat(ServerWebExchange exchange) {
        return serve(exchange, CompletionKind.CHAT);
    }

    @PostMapping("/v1/completions")
    Mono<Void> completions(ServerWebExchange exchange) {
        return serve(exchange, CompletionKind.TEXT);
    }

    private Mono<Void> serve(ServerWebExchange exchange, CompletionKind kind) {
        RequestContext ctx = new RequestContext(UUID.randomUUID().toString().replace("-", ""), clock.instant());
        long arrivedNanos = flow.nowNanos();
        HttpHeaders headers = exchange.getRequest().getHeaders();
        return Mono.fromCallable(() -> disaggAllowed(exchange))
                .flatMap(disagg -> bodies.readJson(exchange.getRequest())
                .map(body -> parser.parse(kind, body))
                .zipWith(exchange.getPrincipal().map(Principal::getName).defaultIfEmpty(""))
                .flatMap(t -> {
                    CompletionRequest request = t.getT1();
                    String key = t.getT2();
                    String tenant = request.user() != null && !request.user().isBlank() ? request.user()
                            : key.isEmpty() ? "anonymous" : key;
                    String flowId = key.isEmpty() ? tenant : key; // a key's users share its fair share
                    ctx.tenant(tenant);
                    ctx.flow(flowId);
                    ctx.priority(policy.priority(flowId, headers.getFirst(ResponseHeaders.PRIORITY)));
                    ctx.model(jobs.modelOf(request), false);
                    return jobs.prepare(request, ctx.requestId(), key, tenant, disagg)
                            .doOnNext(job -> {
                                ctx.job(job);
                                ctx.flowRequest(flowRequest(ctx, job, flowId, arrivedNanos, headers));
                            })
                            .then(Mono.defer(() -> responder.respond(exchange, ctx, request)));
                }))
                .doOnError(ctx::error)
                .doFinally(signal -> accounting.end(ctx, signal));
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
