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
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RoutingMode;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerInfo;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The request path of one generation: flow control → {@code Route} (or the gateway's own pick) →
 * [{@code Prefill} on the prefill worker] → {@code Generate} on the decode worker, and migration when
 * a worker fails mid-stream.
 *
 * <p>Two resources, each acquired and released by {@code Flux.usingWhen}: the {@link FlowSlot} (the
 * request's place among its model's in-flight requests) around the whole request, and the
 * {@link Booking} (a worker and its router booking) around each attempt. A Route answered busy ends
 * the attempt and gives the slot back as busy; the request then waits in the queue again with its
 * original deadline, so a busy router never fails a request. A Route that no router answers in time
 * is replaced by the {@link FallbackPicker}'s choice ({@code ROUTING_MODE_GATEWAY_FALLBACK}).
 *
 * <p>Contract of {@link #run}: a cold {@link Flux} of attempt events, each already folded into the
 * request's {@link RequestResult}, ending with exactly one {@link RequestEvent.Finished} unless it
 * errors with an {@link ApiError} or is cancelled. Cancelling it cancels the current worker call
 * (freeing the engine slot) and releases booking and slot.
 *
 * <p>Migration: when a worker's stream fails (not by our cancel) before its last chunk, the worker is
 * reported to the router (if it looks dead), the attempt's booking released, and the request routed
 * again with every failed worker excluded and {@code prompt + tokens generated so far} as its prompt
 * and {@code max_tokens − generated} as its limit; at most {@code migrationLimit} times. A busy answer
 * during migration goes to the gateway's own pick: the stream is already open. The events seen
 * downstream continue as one stream.
 */
public final class GenerationPipeline {

    private static final Logger log = LoggerFactory.getLogger(GenerationPipeline.class);

    private final RouterClient router;
    private final WorkerClient workers;
    private final FlowAdmission admission;
    private final FleetView fleet;
    private final FallbackPicker fallback;
    private final GatewayMetrics metrics;
    private final Clock clock;
    private final int migrationLimit;
    private final Duration streamIdleTimeout;
    private final Scheduler prepare;
    private final int inlineTokens;

    public GenerationPipeline(RouterClient router, WorkerClient workers, FlowController flow, FleetView fleet,
                              GatewayMetrics metrics, Clock clock, int migrationLimit, Duration streamIdleTimeout,
                              Duration retryAfter, Scheduler prepare, int inlineTokens) {
        this.router = router;
        this.workers = workers;
        this.admission = new FlowAdmission(flow, retryAfter);
        this.fleet = fleet;
        this.fallback = new FallbackPicker(fleet);
        this.metrics = metrics;
        this.clock = clock;
        this.migrationLimit = migrationLimit;
        this.streamIdleTimeout = streamIdleTimeout;
        this.prepare = prepare;
        this.inlineTokens = inlineTokens;
    }

    public Flux<RequestEvent.Attempt> run(GenerationJob job, RequestContext ctx) {
        return admission.around(job.model(), ctx, slot -> attempt(job, ctx, slot));
    }

    private Flux<RequestEvent.Attempt> attempt(GenerationJob job, RequestContext ctx, FlowSlot slot) {
        Mono<Booking> booked = book(job, ctx).doOnNext(b -> slot.routed());
        // Prompts over inlineTokens become a GenerateRequest on the prepare scheduler, not on the thread that
        // delivered the Route answer (the router channel's I/O thread): building and serialising a 40k-token
        // request takes milliseconds, and every other request's Route answer would wait behind it there.
        if (job.promptTokens().length + ctx.result().generatedCount() > inlineTokens) {
            booked = booked.publishOn(prepare);
        }
        return Flux.usingWhen(booked,
                        booking -> execute(job, ctx, booking),
                        Booking::release,
                        (booking, error) -> booking.release(),
                        Booking::release)
                .onErrorResume(WorkerStreamFailure.class, failure -> recover(job, ctx, slot, failure));
    }

    private Flux<RequestEvent.Attempt> recover(GenerationJob job, RequestContext ctx, FlowSlot slot,
                                               WorkerStreamFailure failure) {
        RequestResult state = ctx.result();
        if (job.choices() == 1 && state.generatedCount() >= job.maxTokens()) {
            // Every token arrived; only the worker's last chunk went missing.
            return Flux.just(emit(ctx, new RequestEvent.Finished(FinishReason.FINISH_REASON_LENGTH)));
        }
        // n choices continue from n different outputs: one Generate cannot resume them once tokens were sent.
        boolean resumable = job.choices() == 1 || state.generatedCount() == 0;
        if (!failure.migratable() || !resumable || state.migrations() >= migrationLimit) {
            log.warn("request {} failed on {} after {} migrations: {}", job.requestId(), failure.workerId(),
                    state.migrations(), failure.getMessage());
            return Flux.error(UpstreamErrors.fromWorker(failure));
        }
        log.info("request {}: migrating off {} after {} tokens ({})", job.requestId(), failure.workerId(),
                state.generatedCount(), failure.getMessage());
        metrics.migration(job.model());
        RequestEvent.Attempt migrated = emit(ctx, new RequestEvent.Migrated(failure.workerId()));
        Mono<Void> report = failure.reportable()
                ? router.reportWorkerFailure(failure.workerId(), failure.getMessage()) : Mono.empty();
        return Flux.concat(Flux.just(migrated), report.thenMany(attempt(job, ctx, slot)));
    }

    /** The attempt's worker: the router's answer, or the gateway's own pick when no router answered. */
    private Mono<Booking> book(GenerationJob job, RequestContext ctx) {
        return Mono.defer(() -> {
            RequestResult state = ctx.result();
            int[] context = state.context(job.promptTokens());
            RouteRequest.Builder request = RouteRequest.newBuilder()
                    .setRequestId(job.requestId())
                    .setModel(job.model())
                    .setTenant(job.tenant())
                    .setIsl(context.length)
                    .setBlockSize(job.hasher().blockSize())
                    .setOsl(job.maxTokens() - state.generatedCount())
                    .addAllExclude(state.excluded())
                    .setAllowDisagg(job.allowDisagg() && state.migrations() == 0)
                    .setLoraName(job.scope().loraName())
                    .setTenantSalted(job.scope().salted())
                    .putAllHints(ctx.routeHints());
            for (long h : state.generatedCount() == 0 ? ctx.promptHashes() : job.hasher().seqHashes(context)) {
                request.addSeqHashes(h);
            }
            AtomicBoolean answered = new AtomicBoolean();
            return router.route(request.build())
                    .flatMap(answer -> fromAnswer(job, state, answer))
                    .onErrorResume(RouteFailed.class, failed -> fallback(job, state, failed.touched(), failed.getMessage()))
                    .onErrorMap(e -> !(e instanceof ApiError) && !(e instanceof RouterBusy), UpstreamErrors::fromRouter)
                    .doOnNext(b -> answered.set(true))
                    .doOnCancel(() -> {
                        if (!answered.get()) { // cancelled while a router may be booking it
                            router.release(job.requestId(), allRouters()).subscribe();
                        }
                    });
        });
    }

    private Set<Integer> allRouters() {
        Set<Integer> all = new java.util.HashSet<>();
        for (int r = 0; r < router.routers(); r++) {
            all.add(r);
        }
        return all;
    }

    private Mono<Booking> fromAnswer(GenerationJob job, RequestResult state, RouterAnswer answer) {
        RouteDecision decision = answer.decision();
        if (decision.getBusy()) {
            if (state.migrations() > 0) {
                return fallback(job, state, answer.touched(), "every worker is busy and the stream is already open");
            }
            return Mono.error(new RouterBusy(Duration.ofMillis(Math.max(1, decision.getRetryAfterMs()))));
        }
        if (decision.getWorkerEndpoint().isEmpty()) {
            return Mono.error(noWorker(job, state, ""));
        }
        return Mono.just(Booking.of(job.requestId(), decision, decision.getModeUsed(), answer.router(), answer.touched(),
                router, fleet));
    }

    private Mono<Booking> fallback(GenerationJob job, RequestResult state, Set<Integer> touched, String why) {
        Optional<WorkerInfo> picked = fallback.pick(job.model(), job.hasher().blockSize(), job.scope(), state.excluded());
        if (picked.isEmpty()) {
            if (!touched.isEmpty()) {
                router.release(job.requestId(), touched).subscribe();
            }
            return Mono.error(noWorker(job, state, " (" + why + ")"));
        }
        WorkerInfo w = picked.get();
        log.debug("request {}: the gateway picks {} itself: {}", job.requestId(), w.getWorkerId(), why);
        RouteDecision decision = RouteDecision.newBuilder().setWorkerId(w.getWorkerId()).setWorkerEndpoint(w.getEndpoint())
                .setModeUsed(RoutingMode.ROUTING_MODE_GATEWAY_FALLBACK).build();
        return Mono.just(Booking.of(job.requestId(), decision, RoutingMode.ROUTING_MODE_GATEWAY_FALLBACK, -1, touched,
                router, fleet));
    }

    private static ApiError noWorker(GenerationJob job, RequestResult state, String detail) {
        return ApiError.unavailable("no_worker", "No worker is available for '" + job.model() + "'"
                + (state.migrations() > 0 ? " after " + state.migrations() + " worker failures" : "") + detail + ".",
                Duration.ofSeconds(1));
    }

    private Flux<RequestEvent.Attempt> execute(GenerationJob job, RequestContext ctx, Booking booking) {
        RouteDecision decision = booking.decision();
        RequestResult state = ctx.result();
        int[] context = state.context(job.promptTokens());
        int remaining = job.maxTokens() - state.generatedCount();
        SamplingParams sampling = job.sampling();
        StopConditions stop = stop(job, remaining);
        metrics.routed(job.model(), booking.mode());
        RequestEvent.Attempt routed = emit(ctx, new RequestEvent.Routed(decision.getWorkerId(), booking.mode(), booking.router(),
                new OverlapPrediction(decision.getOverlapBlocks(), context.length)));
        Flux<RequestEvent.Attempt> generation = prefill(job, ctx, decision, context, sampling, stop).flatMapMany(handoff -> {
            GenerateRequest.Builder request = GenerateRequest.newBuilder()
                    .setRequestId(job.requestId())
                    .setModel(job.model())
                    .setTenant(job.tenant())
                    .setCacheScope(job.cacheScope())
                    .setSampling(sampling)
                    .setStop(stop);
            if (job.choices() > 1) {
                request.setN(job.choices());
            }
            for (int t : context) {
                request.addTokenIds(t);
            }
            handoff.ifPresent(request::setHandoff);
            AtomicBoolean firstToken = new AtomicBoolean();
            AtomicInteger finishedChoices = new AtomicInteger();
            String workerId = decision.getWorkerId();
            return workers.generate(decision.getWorkerEndpoint(), request.build())
                    .timeout(streamIdleTimeout)
                    .concatMapIterable(chunk -> {
                        if (chunk.getTokenIdsCount() > 0 && booking.router() >= 0 && firstToken.compareAndSet(false, true)) {
                            router.markPrefillDone(job.requestId(), booking.router()).subscribe();
                        }
                        return events(ctx, workerId, chunk, finishedChoices, job.choices());
                    })
                    .concatWith(Flux.defer(() -> ctx.result().attemptFinished() ? Flux.empty()
                            : Flux.error(new WorkerStreamFailure(workerId, Status.Code.UNKNOWN,
                            "worker " + workerId + " ended its stream without a last chunk", null))))
                    .onErrorMap(e -> !(e instanceof WorkerStreamFailure), e -> WorkerStreamFailure.of(workerId, e));
        });
        return Flux.concat(Flux.just(routed), generation);
    }

    /** The KV handoff from the prefill worker, or nothing: no prefill worker, or its Prefill failed. */
    private Mono<Optional<KvHandoff>> prefill(GenerationJob job, RequestContext ctx, RouteDecision decision,
                                              int[] context, SamplingParams sampling, StopConditions stop) {
        if (decision.getPrefillEndpoint().isEmpty()) {
            return Mono.just(Optional.empty());
        }
        PrefillRequest.Builder request = PrefillRequest.newBuilder()
                .setRequestId(job.requestId())
                .setModel(job.model())
                .setTenant(job.tenant())
                .setCacheScope(job.cacheScope())
                .setSampling(sampling)
                .setStop(stop);
        for (int t : context) {
            request.addTokenIds(t);
        }
        return workers.prefill(decision.getPrefillEndpoint(), request.build())
                .map(result -> {
                    ctx.on(new RequestEvent.Prefilled(decision.getPrefillWorkerId(), result.getUsage().getCachedTokens()));
                    return Optional.of(result.getHandoff());
                })
                .defaultIfEmpty(Optional.empty())
                .onErrorResume(e -> {
                    log.info("request {}: prefill on {} failed ({}); {} prefills locally", job.requestId(),
                            decision.getPrefillWorkerId(), e.toString(), decision.getWorkerId());
                    return Mono.just(Optional.empty());
                });
    }

    /** A chunk as events; the attempt is finished when every one of the {@code choices} has ended. */
    private List<RequestEvent.Attempt> events(RequestContext ctx, String workerId, GenerateChunk chunk,
                                              AtomicInteger finishedChoices, int choices) {
        if (chunk.getChoice() >= choices) {
            throw new WorkerStreamFailure(workerId, Status.Code.INTERNAL, "worker " + workerId + " sent choice "
                    + chunk.getChoice() + " of a request with " + choices, null);
        }
        List<RequestEvent.Attempt> out = new ArrayList<>(2);
        int[] ids = new int[chunk.getTokenIdsCount()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = chunk.getTokenIds(i);
        }
        // Every choice reports the same prompt's usage; the first choice's counts.
        Integer cached = chunk.hasUsage() && chunk.getChoice() == 0 ? chunk.getUsage().getCachedTokens() : null;
        out.add(emit(ctx, new RequestEvent.Tokens(chunk.getChoice(), ids, chunk.getLogprobsList(), clock.instant(),
                chunk.getHandoffUsed(), cached)));
        FinishReason reason = chunk.getFinishReason();
        if (reason == FinishReason.FINISH_REASON_LENGTH || reason == FinishReason.FINISH_REASON_STOP) {
            out.add(emit(ctx, new RequestEvent.Finished(chunk.getChoice(), reason,
                    finishedChoices.incrementAndGet() == choices)));
        } else if (reason != FinishReason.FINISH_REASON_UNSPECIFIED && reason != FinishReason.UNRECOGNIZED) {
            throw new WorkerStreamFailure(workerId, Status.Code.ABORTED,
                    "worker " + workerId + " ended the request with " + reason, null);
        }
        return out;
    }

    /** Folds {@code event} into the request's result and returns it for downstream. */
    private static <E extends RequestEvent> E emit(RequestContext ctx, E event) {
        ctx.on(event);
        return event;
    }

    private static StopConditions stop(GenerationJob job, int remaining) {
        StopConditions.Builder s = StopConditions.newBuilder().setMaxTokens(remaining).setIgnoreEos(job.ignoreEos())
                .addAllStopStrings(job.stopStrings());
        for (int id : job.stopTokenIds()) {
            s.addStopTokenIds(id);
        }
        return s.build();
    }
}
