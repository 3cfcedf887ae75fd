package io.flotilla.gateway.generation;

import io.flotilla.gateway.client.RequestRecordPublisher;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.metrics.TenantMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.RequestOutcome;
import io.flotilla.protocol.v1.RequestRecord;
import io.flotilla.protocol.v1.RoutingMode;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import org.springframework.web.util.DisconnectedClientHelper;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Ends a request exactly once, whichever way it ended (completion, error, client disconnect): records
 * metrics and publishes one {@code RequestRecord} from the request's {@link RequestResult}. What the
 * request held (its flow slot, its router booking) the pipeline released already, around the attempt
 * that held it. Never blocks and never throws.
 */
public final class RequestAccounting {

    private static final ContextSnapshotFactory SNAPSHOTS = ContextSnapshotFactory.builder().build();

    private final GatewayMetrics metrics;
    private final TenantMetrics tenants;
    private final RequestRecordPublisher records;
    private final Clock clock;

    public RequestAccounting(GatewayMetrics metrics, TenantMetrics tenants, RequestRecordPublisher records, Clock clock) {
        this.metrics = metrics;
        this.tenants = tenants;
        this.records = records;
        this.clock = clock;
    }

    /**
     * {@code response}, ending the request when it terminates. The request's observation, which WebFlux keeps in
     * the subscriber's Reactor context rather than on the thread that happens to end it, is made current while it
     * ends: the published record then carries the request's trace context.
     */
    public <T> Mono<T> endWhenDone(RequestContext ctx, Mono<T> response) {
        return Mono.deferContextual(view -> response.doFinally(signal -> {
            try (ContextSnapshot.Scope ignored = SNAPSHOTS.setThreadLocalsFrom(view)) {
                end(ctx, signal);
            }
        }));
    }

    /** Called when the request's response publisher terminates with {@code signal}. */
    public void end(RequestContext ctx, SignalType signal) {
        if (!ctx.markEnded()) {
            return;
        }
        RequestResult p = ctx.result();
        RequestOutcome outcome = outcome(ctx, signal);
        String model = ctx.modelServed() ? ctx.model() : GatewayMetrics.UNKNOWN_MODEL;
        Instant now = clock.instant();
        GenerationJob job = ctx.job();
        int isl = job == null ? 0 : job.promptTokens().length;
        int cached = p.cachedTokens(isl);
        Duration e2e = Duration.between(p.arrived(), now);
        Duration ttft = p.firstTokenAt() == null ? null : Duration.between(p.arrived(), p.firstTokenAt());
        Duration itl = p.generatedCount() < 2 ? null
                : Duration.between(p.firstTokenAt(), p.lastTokenAt()).dividedBy(p.generatedCount() - 1);

        metrics.finished(model, ctx.endpoint(), RequestOutcomes.tag(outcome));
        tenants.finished(ctx.flow(), model, RequestOutcomes.tag(outcome), isl, p.generatedCount(), cached,
                outcome == RequestOutcome.REQUEST_OUTCOME_REJECTED && ctx.error() instanceof ApiError api
                        ? (api.code() == null ? "rejected" : api.code()) : null);
        if (job != null) {
            metrics.e2e(model, e2e);
            if (ttft != null) {
                metrics.ttft(model, ttft);
            }
            if (itl != null) {
                metrics.itl(model, itl);
            }
            if (cached > 0) {
                metrics.cachedTokens(model, cached);
            }
            if (outcome == RequestOutcome.REQUEST_OUTCOME_OK) {
                p.overlapResult(job.hasher().blockSize()).ifPresent(r -> metrics.overlapPrediction(model, r.tag()));
            }
        }
        records.publish(RequestRecord.newBuilder()
                    .setId(ctx.requestId())
                    .setModel(ctx.model() == null ? "" : ctx.model())
                    .setTenant(ctx.tenant())
                    .setLoraName(ctx.job() == null ? "" : ctx.job().scope().loraName())
                    .setIsl(isl)
                    .setOsl(p.generatedCount())
                    .setCachedTokens(cached)
                    .setTtftMs(ttft == null ? 0 : ttft.toNanos() / 1e6)
                    .setItlMs(itl == null ? 0 : itl.toNanos() / 1e6)
                    .setE2EMs(e2e.toNanos() / 1e6)
                    .setWorker(p.worker())
                    .setPrefillWorker(p.prefillWorker())
                    .setOutcome(outcome)
                    .setMigrations(p.migrations())
                    .setModeUsed(p.mode() == null ? RoutingMode.ROUTING_MODE_UNSPECIFIED : p.mode())
                    .setQueueMs(p.queueWait() == null ? 0 : p.queueWait().toNanos() / 1e6)
                    .setPriority(ctx.priority().label())
                    .setTs(now.toEpochMilli())
                    .build());
    }

    private static RequestOutcome outcome(RequestContext ctx, SignalType signal) {
        RequestResult p = ctx.result();
        if (p.finishReason() != null) {
            return RequestOutcome.REQUEST_OUTCOME_OK;
        }
        if (p.streamedError() != null) { // it had started: whatever the cause, it failed
            return "worker_timeout".equals(p.streamedError().code())
                    ? RequestOutcome.REQUEST_OUTCOME_TIMEOUT : RequestOutcome.REQUEST_OUTCOME_FAILED;
        }
        if (ctx.error() instanceof ApiError api) {
            return RequestOutcomes.of(api);
        }
        if (ctx.error() != null) { // writing to a client that went away fails rather than cancels
            return DisconnectedClientHelper.isClientDisconnectedException(ctx.error())
                    ? RequestOutcome.REQUEST_OUTCOME_CANCELLED : RequestOutcome.REQUEST_OUTCOME_FAILED;
        }
        return signal == SignalType.CANCEL || p.abandoned()
                ? RequestOutcome.REQUEST_OUTCOME_CANCELLED : RequestOutcome.REQUEST_OUTCOME_FAILED;
    }
}
