package io.flotilla.gateway.generation;

import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.client.WorkerClient;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The request path of one generation: {@code Route} → [{@code Prefill} on the prefill worker] →
 * {@code Generate} on the decode worker, and migration when a worker fails mid-stream.
 *
 * <p>Contract of {@link #run}: a cold {@link Flux} of {@link WorkerEvent}s that ends with exactly one
 * {@link WorkerEvent.Finished} unless it errors with an {@link ApiError} or is cancelled. Cancelling
 * it cancels the current worker call (freeing the engine slot). It never releases the router's final
 * booking: the caller does, once, when the request ends ({@link RequestProgress#booked()}).
 *
 * <p>Migration: when a worker's stream fails (not by our cancel) before its last chunk, the worker
 * is reported to the router (if it looks dead), the booking released, and the request routed again
 * with every failed worker excluded and {@code prompt + tokens generated so far} as its prompt and
 * {@code max_tokens − generated} as its limit; at most {@code migrationLimit} times. The events seen
 * downstream continue as one stream.
 */
public final class GenerationPipeline {

    private static final Logger log = LoggerFactory.getLogger(GenerationPipeline.class);

    private final RouterClient router;
    private final WorkerClient workers;
    private final GatewayMetrics metrics;
    private final Clock clock;
    private final int migrationLimit;
    private final Duration streamIdleTimeout;

    public GenerationPipeline(RouterClient router, WorkerClient workers, GatewayMetrics metrics, Clock clock,
                              int migrationLimit, Duration streamIdleTimeout) {
        this.router = router;
        this.workers = workers;
        this.metrics = metrics;
        this.clock = clock;
        this.migrationLimit = migrationLimit;
        this.streamIdleTimeout = streamIdleTimeout;
    }

    public Flux<WorkerEvent> run(GenerationJob job, RequestProgress progress) {
        return Flux.defer(() -> route(job, progress)
                .flatMapMany(decision -> execute(job, progress, decision))
                .onErrorResume(WorkerStreamFailure.class, failure -> recover(job, progress, failure)));
    }

    private Flux<WorkerEvent> recover(GenerationJob job, RequestProgress progress, WorkerStreamFailure failure) {
        if (job.choices() == 1 && progress.generatedCount() >= job.maxTokens()) {
            // Every token arrived; only the worker's last chunk went missing.
            progress.attemptFinished();
            return Flux.just(new WorkerEvent.Finished(FinishReason.FINISH_REASON_LENGTH));
        }
        // n choices continue from n different outputs: one Generate cannot resume them once tokens were sent.
        boolean resumable = job.choices() == 1 || progress.generatedCount() == 0;
        if (!failure.migratable() || !resumable || progress.migrations() >= migrationLimit) {
            log.warn("request {} failed on {} after {} migrations: {}", job.requestId(), failure.workerId(),
                    progress.migrations(), failure.getMessage());
            return Flux.error(UpstreamErrors.fromWorker(failure));
        }
        log.info("request {}: migrating off {} after {} tokens ({})", job.requestId(), failure.workerId(),
                progress.generatedCount(), failure.getMessage());
        progress.migrating(failure.workerId());
        metrics.migration(job.model());
        Mono<Void> report = failure.reportable()
                ? router.reportWorkerFailure(failure.workerId(), failure.getMessage()) : Mono.empty();
        return report.then(router.release(job.requestId())).thenMany(run(job, progress));
    }

    private Mono<RouteDecision> route(GenerationJob job, RequestProgress progress) {
        int[] context = progress.context(job.promptTokens());
        int remaining = job.maxTokens() - progress.generatedCount();
        RouteRequest.Builder request = RouteRequest.newBuilder()
                .setRequestId(job.requestId())
                .setModel(job.model())
                .setTenant(job.tenant())
                .setIsl(context.length)
                .setBlockSize(job.hasher().blockSize())
                .setOsl(remaining)
                .addAllExclude(progress.excluded())
                .setAllowDisagg(job.allowDisagg() && progress.migrations() == 0);
        for (long h : job.hasher().seqHashes(context)) {
            request.addSeqHashes(h);
        }
        return Mono.defer(() -> {
                    progress.routing();
                    return router.route(request.build());
                })
                .onErrorMap(e -> !(e instanceof ApiError), UpstreamErrors::fromRouter)
                .flatMap(decision -> {
                    if (decision.getBusy() || decision.getWorkerEndpoint().isEmpty()) {
                        progress.notBooked();
                    }
                    if (decision.getBusy()) {
                        long ms = Math.max(1000, decision.getRetryAfterMs());
                        return Mono.error(ApiError.unavailable("workers_busy", "Every worker serving '" + job.model()
                                + "' is busy; retry later.", Duration.ofMillis(ms)));
                    }
                    if (decision.getWorkerEndpoint().isEmpty()) {
                        return Mono.error(ApiError.unavailable("no_worker", "No worker is available for '" + job.model()
                                + "'" + (progress.migrations() > 0 ? " after " + progress.migrations() + " worker failures" : "")
                                + ".", Duration.ofSeconds(1)));
                    }
                    progress.routedTo(decision.getWorkerId());
                    return Mono.just(decision);
                });
    }

    private Flux<WorkerEvent> execute(GenerationJob job, RequestProgress progress, RouteDecision decision) {
        int[] context = progress.context(job.promptTokens());
        int remaining = job.maxTokens() - progress.generatedCount();
        SamplingParams sampling = job.sampling();
        StopConditions stop = stop(job, remaining);
        return prefill(job, progress, decision, context, sampling, stop).flatMapMany(handoff -> {
            GenerateRequest.Builder request = GenerateRequest.newBuilder()
                    .setRequestId(job.requestId())
                    .setModel(job.model())
                    .setTenant(job.tenant())
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
                        if (chunk.getTokenIdsCount() > 0 && firstToken.compareAndSet(false, true)) {
                            router.markPrefillDone(job.requestId()).subscribe();
                        }
                        return events(progress, workerId, chunk, finishedChoices, job.choices());
                    })
                    .concatWith(Flux.defer(() -> progress.isAttemptFinished() ? Flux.empty()
                            : Flux.error(new WorkerStreamFailure(workerId, Status.Code.UNKNOWN,
                            "worker " + workerId + " ended its stream without a last chunk", null))))
                    .onErrorMap(e -> !(e instanceof WorkerStreamFailure), e -> WorkerStreamFailure.of(workerId, e));
        });
    }

    /** The KV handoff from the prefill worker, or nothing: no prefill worker, or its Prefill failed. */
    private Mono<Optional<KvHandoff>> prefill(GenerationJob job, RequestProgress progress, RouteDecision decision,
                                              int[] context, SamplingParams sampling, StopConditions stop) {
        if (decision.getPrefillEndpoint().isEmpty()) {
            return Mono.just(Optional.empty());
        }
        PrefillRequest.Builder request = PrefillRequest.newBuilder()
                .setRequestId(job.requestId())
                .setModel(job.model())
                .setTenant(job.tenant())
                .setSampling(sampling)
                .setStop(stop);
        for (int t : context) {
            request.addTokenIds(t);
        }
        return workers.prefill(decision.getPrefillEndpoint(), request.build())
                .map(result -> {
                    progress.prefilledBy(decision.getPrefillWorkerId(), result.getUsage().getCachedTokens());
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
    private List<WorkerEvent> events(RequestProgress progress, String workerId, GenerateChunk chunk,
                                     AtomicInteger finishedChoices, int choices) {
        progress.onChunk(chunk, clock.instant());
        List<WorkerEvent> out = new ArrayList<>(2);
        if (chunk.getChoice() >= choices) {
            throw new WorkerStreamFailure(workerId, Status.Code.INTERNAL, "worker " + workerId + " sent choice "
                    + chunk.getChoice() + " of a request with " + choices, null);
        }
        if (chunk.getTokenIdsCount() > 0) {
            int[] ids = new int[chunk.getTokenIdsCount()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = chunk.getTokenIds(i);
            }
            out.add(new WorkerEvent.Tokens(chunk.getChoice(), ids, chunk.getLogprobsList()));
        }
        FinishReason reason = chunk.getFinishReason();
        if (reason == FinishReason.FINISH_REASON_LENGTH || reason == FinishReason.FINISH_REASON_STOP) {
            if (finishedChoices.incrementAndGet() == choices) {
                progress.attemptFinished();
            }
            out.add(new WorkerEvent.Finished(chunk.getChoice(), reason));
        } else if (reason != FinishReason.FINISH_REASON_UNSPECIFIED && reason != FinishReason.UNRECOGNIZED) {
            throw new WorkerStreamFailure(workerId, Status.Code.ABORTED,
                    "worker " + workerId + " ended the request with " + reason, null);
        }
        return out;
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
