package io.flotilla.worker.agent;

import io.flotilla.worker.engine.Engine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;

/** The metrics of one worker, tagged {@code worker=<id>}. */
public final class WorkerMetrics {

    private final Counter prefixHitTokens;
    private final Counter prefillTokens;
    private final Timer step;

    public WorkerMetrics(MeterRegistry registry, WorkerIdentity identity, Engine engine, KvEventPublisher events,
                         StatusReporter status) {
        Tags tags = Tags.of("worker", identity.id(), "role", roleName(identity), "model", identity.model());
        Gauge.builder("flotilla.worker.running_requests", engine, e -> e.load().running())
                .description("Sequences in the running batch").tags(tags).register(registry);
        Gauge.builder("flotilla.worker.waiting_requests", engine, e -> e.load().waiting())
                .description("Sequences waiting for admission").tags(tags).register(registry);
        Gauge.builder("flotilla.worker.kv_usage_ratio", engine, e -> e.load().kvUsage())
                .description("Fraction of KV blocks referenced by sequences").tags(tags).register(registry);
        prefixHitTokens = Counter.builder("flotilla.worker.prefix_hit_tokens")
                .description("Prompt tokens served from resident KV (prefix cache hits)").tags(tags).register(registry);
        prefillTokens = Counter.builder("flotilla.worker.prefill_tokens")
                .description("Prompt tokens computed (not cached)").tags(tags).register(registry);
        step = Timer.builder("flotilla.worker.step")
                .description("Engine step duration").tags(tags)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        FunctionCounter.builder("flotilla.worker.kv_events_dropped", events, KvEventPublisher::dropped)
                .description("KV event batches dropped because Kafka was unreachable for too long").tags(tags)
                .register(registry);
        FunctionCounter.builder("flotilla.worker.kafka_publish_errors", this,
                        m -> events.publishErrors() + status.publishErrors())
                .description("Kafka sends that failed").tags(tags).register(registry);
        FunctionCounter.builder("flotilla.worker.kv_event_batches_published", events, KvEventPublisher::published)
                .description("KV event batches acknowledged by Kafka").tags(tags).register(registry);
    }

    public void requestFinished(int promptTokens, int cachedTokens) {
        prefixHitTokens.increment(cachedTokens);
        prefillTokens.increment(Math.max(0, promptTokens - cachedTokens));
    }

    public void stepExecuted(double stepMs) {
        step.record(Duration.ofNanos((long) (stepMs * 1_000_000)));
    }

    private static String roleName(WorkerIdentity identity) {
        return identity.role().name().replace("WORKER_ROLE_", "").toLowerCase(java.util.Locale.ROOT);
    }
}
