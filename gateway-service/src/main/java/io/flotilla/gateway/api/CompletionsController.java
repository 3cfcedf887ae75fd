package io.flotilla.gateway.api;

import io.flotilla.gateway.admission.AdmissionControl;
import io.flotilla.gateway.admission.AdmissionRejected;
import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.generation.GenerationPipeline;
import io.flotilla.gateway.generation.JobFactory;
import io.flotilla.gateway.generation.RequestAccounting;
import io.flotilla.gateway.generation.RequestContext;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.RequestParser;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import java.security.Principal;
import java.time.Clock;
import java.util.UUID;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/completions}: read and validate the body,
 * resolve and tokenize, admit (per-model slots and queue), then serve through the
 * {@link GenerationPipeline}. Every request, however it ends, is accounted once.
 */
@RestController
class CompletionsController {

    private final RequestBodies bodies;
    private final RequestParser parser = new RequestParser();
    private final JobFactory jobs;
    private final AdmissionControl admission;
    private final CompletionResponder responder;
    private final RequestAccounting accounting;
    private final GatewayMetrics metrics;
    private final GatewayProperties properties;
    private final Clock clock;

    CompletionsController(JsonMapper json, JobFactory jobs, AdmissionControl admission, GenerationPipeline pipeline,
                          RequestAccounting accounting, GatewayMetrics metrics, GatewayProperties properties, Clock clock) {
        this.bodies = new RequestBodies(json, (int) Math.min(Integer.MAX_VALUE, properties.maxRequestSize().toBytes()));
        this.jobs = jobs;
        this.admission = admission;
        this.responder = new CompletionResponder(pipeline, json, clock, metrics);
        this.accounting = accounting;
        this.metrics = metrics;
        this.properties = properties;
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
        return Mono.fromCallable(() -> disaggAllowed(exchange))
                .flatMap(disagg -> bodies.readJson(exchange.getRequest())
                .map(body -> parser.parse(kind, body))
                .zipWith(exchange.getPrincipal().map(Principal::getName).defaultIfEmpty(""))
                .flatMap(t -> {
                    CompletionRequest request = t.getT1();
                    String tenant = request.user() != null && !request.user().isBlank() ? request.user()
                            : t.getT2().isEmpty() ? "anonymous" : t.getT2();
                    ctx.tenant(tenant);
                    ctx.model(jobs.modelOf(request), false);
                    return jobs.prepare(request, ctx.requestId(), tenant, disagg)
                            .doOnNext(ctx::job)
                            .then(admit(ctx))
                            .then(Mono.defer(() -> responder.respond(exchange, ctx, request)));
                }))
                .doOnError(ctx::error)
                .doFinally(signal -> accounting.end(ctx, signal));
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

    private Mono<Void> admit(RequestContext ctx) {
        String model = ctx.model();
        return admission.admit(model)
                .doOnNext(permit -> {
                    ctx.permit(permit);
                    metrics.admitted(model);
                })
                .onErrorMap(AdmissionRejected.class, e -> {
                    GatewayProperties.Admission a = properties.admission();
                    return e.reason() == AdmissionRejected.Reason.QUEUE_FULL
                            ? ApiError.rateLimited("queue_full", "Too many requests for '" + model + "': " + e.getMessage()
                            + ". Retry later.", a.retryAfter())
                            : ApiError.unavailable("queue_timeout", "The request for '" + model + "' waited for a free slot "
                            + "longer than allowed: " + e.getMessage() + ". Retry later.", a.retryAfter());
                })
                .then();
    }
}
