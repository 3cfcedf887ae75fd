package io.flotilla.gateway.generation;

import io.flotilla.gateway.client.RouteFailed;
import io.flotilla.gateway.client.RouterAnswer;
import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.client.WorkerClient;
import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.flow.FlowSlot;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.routing.FallbackPicker;
import io.flotilla.gateway.routing.FleetView;
import io.flotilla.protocol.v1.EmbedInput;
import io.flotilla.protocol.v1.EmbedRequest;
import io.flotilla.protocol.v1.EmbedResponse;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RoutingMode;
import io.flotilla.protocol.v1.WorkerInfo;
import io.grpc.Status;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The request path of one embeddings request: flow control → {@code Route} with {@code embed} set (or the
 * gateway's own pick among workers that embed) → {@code Embed} on that worker. The same two resources as a
 * generation, each held by {@code Mono.usingWhen}: the {@link FlowSlot} around the request and the {@link Booking}
 * around the attempt; a busy answer sends the request back to the queue with its deadline, as a generation's does.
 *
 * <p>Routing: an embedding reuses no KV (a pooling pass over the whole input, nothing cached for the next request)
 * and produces no tokens, so the Route carries no seq hashes, {@code osl} 0 and no disaggregation: the router
 * prices candidates by load alone and books the input's tokens as prefill work. One attempt: an embedding that
 * failed is cheap to retry, and the client does so with its own policy.
 */
public final class EmbeddingPipeline {

    private static final Duration RETRY_SOON = Duration.ofSeconds(1);

    private final RouterClient router;
    private final WorkerClient workers;
    private final FlowAdmission admission;
    private final FleetView fleet;
    private final FallbackPicker fallback;
    private final GatewayMetrics metrics;

    public EmbeddingPipeline(RouterClient router, WorkerClient workers, FlowController flow, FleetView fleet,
                             GatewayMetrics metrics, Duration retryAfter) {
        this.router = router;
        this.workers = workers;
        this.admission = new FlowAdmission(flow, retryAfter);
        this.fleet = fleet;
        this.fallback = new FallbackPicker(fleet);
        this.metrics = metrics;
    }

    /** The worker's answer; {@code ctx.flowRequest()} is set. Errors are {@link ApiError}s. */
    public Mono<EmbedResponse> run(EmbeddingJob job, RequestContext ctx) {
        return admission.around(job.model(), ctx, slot -> attempt(job, ctx, slot)).singleOrEmpty();
    }

    private Mono<EmbedResponse> attempt(EmbeddingJob job, RequestContext ctx, FlowSlot slot) {
        return Mono.usingWhen(book(job).doOnNext(b -> slot.routed()),
                booking -> embed(job, ctx, booking),
                Booking::release,
                (booking, error) -> booking.release(),
                Booking::release);
    }

    private Mono<Booking> book(EmbeddingJob job) {
        return Mono.defer(() -> {
            RouteRequest request = RouteRequest.newBuilder()
                    .setRequestId(job.requestId())
                    .setModel(job.model())
                    .setTenant(job.tenant())
                    .setIsl(job.promptTokens())
                    .setBlockSize(job.blockSize())
                    .setEmbed(true)
                    .build();
            return router.route(request)
                    .flatMap(answer -> fromAnswer(job, answer))
                    .onErrorResume(RouteFailed.class, failed -> fallback(job, failed.touched()))
                    .onErrorMap(e -> !(e instanceof ApiError) && !(e instanceof RouterBusy), UpstreamErrors::fromRouter);
        });
    }

    private Mono<Booking> fromAnswer(EmbeddingJob job, RouterAnswer answer) {
        RouteDecision decision = answer.decision();
        if (decision.getBusy()) {
            return Mono.error(new RouterBusy(Duration.ofMillis(Math.max(1, decision.getRetryAfterMs()))));
        }
        if (decision.getWorkerEndpoint().isEmpty()) {
            return Mono.error(noWorker(job));
        }
        return Mono.just(Booking.of(job.requestId(), decision, decision.getModeUsed(), answer.router(), answer.touched(),
                router, fleet));
    }

    private Mono<Booking> fallback(EmbeddingJob job, Set<Integer> touched) {
        Optional<WorkerInfo> picked = fallback.pickEmbedder(job.model(), List.of());
        if (picked.isEmpty()) {
            if (!touched.isEmpty()) {
                router.release(job.requestId(), touched).subscribe();
            }
            return Mono.error(noWorker(job));
        }
        WorkerInfo w = picked.get();
        RouteDecision decision = RouteDecision.newBuilder().setWorkerId(w.getWorkerId()).setWorkerEndpoint(w.getEndpoint())
                .setModeUsed(RoutingMode.ROUTING_MODE_GATEWAY_FALLBACK).build();
        return Mono.just(Booking.of(job.requestId(), decision, RoutingMode.ROUTING_MODE_GATEWAY_FALLBACK, -1, touched,
                router, fleet));
    }

    private Mono<EmbedResponse> embed(EmbeddingJob job, RequestContext ctx, Booking booking) {
        metrics.routed(job.model(), booking.mode());
        ctx.on(new RequestEvent.Routed(booking.workerId(), booking.mode(), booking.router()));
        EmbedRequest.Builder request = EmbedRequest.newBuilder()
                .setRequestId(job.requestId())
                .setModel(job.model())
                .setDimensions(job.dimensions());
        for (int[] ids : job.inputs()) {
            EmbedInput.Builder input = EmbedInput.newBuilder();
            for (int id : ids) {
                input.addTokenIds(id);
            }
            request.addInputs(input);
        }
        return workers.embed(booking.decision().getWorkerEndpoint(), request.build())
                .onErrorMap(e -> fromWorker(booking.workerId(), e))
                .flatMap(response -> {
                    if (response.getEmbeddingsCount() != job.inputs().size()) {
                        return Mono.error(ApiError.badGateway("worker_error", "worker " + booking.workerId() + " returned "
                                + response.getEmbeddingsCount() + " embeddings for " + job.inputs().size() + " inputs"));
                    }
                    ctx.on(new RequestEvent.Finished(FinishReason.FINISH_REASON_STOP));
                    return Mono.just(response);
                });
    }

    private static ApiError fromWorker(String workerId, Throwable error) {
        Status status = Status.fromThrowable(error);
        String detail = "worker " + workerId + ": " + (status.getDescription() == null ? status.getCode().name()
                : status.getDescription());
        return switch (status.getCode()) {
            case INVALID_ARGUMENT, OUT_OF_RANGE -> ApiError.invalid("input", "The worker rejected the input: " + detail);
            case UNIMPLEMENTED, FAILED_PRECONDITION -> ApiError.unavailable("embeddings_unavailable",
                    "The worker chosen cannot embed (it changed since it advertised embeddings): " + detail, RETRY_SOON);
            case RESOURCE_EXHAUSTED -> ApiError.unavailable("worker_overloaded", "The worker is full: " + detail, RETRY_SOON);
            case UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, CANCELLED -> ApiError.unavailable("worker_unavailable",
                    "The worker could not embed the input: " + detail, RETRY_SOON);
            default -> ApiError.badGateway("worker_error", "The worker failed: " + detail);
        };
    }

    private static ApiError noWorker(EmbeddingJob job) {
        return ApiError.unavailable("no_worker", "No worker that embeds is available for '" + job.model() + "'.",
                RETRY_SOON);
    }
}
