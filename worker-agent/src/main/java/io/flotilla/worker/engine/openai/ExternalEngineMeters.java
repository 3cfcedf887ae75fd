package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.vllm.KvEventCounters;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import java.util.function.ToDoubleFunction;

/**
 * The adapter's own meters, next to the worker's: engine health and scrapes
 * ({@code flotilla_worker_engine_*}) and the KV event stream's translation and repair counters
 * ({@code flotilla_worker_kv_events_*}, all zero without KV events).
 */
public final class ExternalEngineMeters {

    private ExternalEngineMeters() {
    }

    /** Registers {@code engine}'s meters on {@code registry} with the worker's {@code tags}. */
    public static void bind(RemoteEngine engine, MeterRegistry registry, Tags tags) {
        EngineMetricsScraper scraper = engine.scraper();
        Gauge.builder("flotilla.worker.engine.healthy", engine, e -> e.healthy() ? 1 : 0)
                .description("1 while the engine answers health and metrics, else 0").tags(tags).register(registry);
        Gauge.builder("flotilla.worker.engine.block_size_mismatch", scraper, EngineMetricsScraper::mismatchedBlockSize)
                .description("The engine's block size when it differs from the one Flotilla hashes with, else 0")
                .tags(tags).register(registry);
        Gauge.builder("flotilla.worker.engine.kv_capacity_blocks", engine, RemoteEngine::reportedKvBlocks)
                .description("KV capacity the engine reports, in blocks of the worker's block size (0 while unknown)")
                .tags(tags).register(registry);
        Gauge.builder("flotilla.worker.engine.timing_samples", engine, e -> e.timingSamples()[0])
                .description("Requests behind the learned timing").tags(tags).tag("fit", "prefill").register(registry);
        Gauge.builder("flotilla.worker.engine.timing_samples", engine, e -> e.timingSamples()[1])
                .description("Requests behind the learned timing").tags(tags).tag("fit", "decode").register(registry);
        Gauge.builder("flotilla.worker.engine.timing_learned", engine, e -> e.learnedTiming().isPresent() ? 1 : 0)
                .description("1 once the engine's timing is learned well enough to be published, else 0")
                .tags(tags).register(registry);
        FunctionCounter.builder("flotilla.worker.engine.scrape_failures", scraper, EngineMetricsScraper::failedRoundsTotal)
                .description("Health and metrics scrape rounds of the engine that failed").tags(tags).register(registry);
        FunctionCounter.builder("flotilla.worker.engine.health_failures", scraper, EngineMetricsScraper::healthFailuresTotal)
                .description("Engine health checks answered with a status other than 200").tags(tags).register(registry);

        KvEventCounters kv = engine.kvEventCounters();
        counter(registry, tags, kv, "decoded_batches", "KV event batches of the engine decoded (live or replayed)",
                KvEventCounters::batches);
        counter(registry, tags, kv, "undecodable", "KV event payloads that were no KV event batch in any known form",
                KvEventCounters::undecodable);
        counter(registry, tags, kv, "unknown_event_types", "KV events of an unknown type (skipped)",
                KvEventCounters::unknownEventTypes);
        untranslatable(registry, tags, kv, "unknown_parent", KvEventCounters::unknownParent);
        untranslatable(registry, tags, kv, "missing_tokens", KvEventCounters::missingTokens);
        untranslatable(registry, tags, kv, "block_size_mismatch", KvEventCounters::blockSizeMismatch);
        untranslatable(registry, tags, kv, "lora", KvEventCounters::loraBlocks);
        untranslatable(registry, tags, kv, "unscoped", KvEventCounters::unscopedBlocks);
        untranslatable(registry, tags, kv, "opaque_keys", KvEventCounters::opaqueKeyBlocks);
        untranslatable(registry, tags, kv, "hash_conflict", KvEventCounters::hashConflicts);
        counter(registry, tags, kv, "unknown_removed", "Removed engine blocks that were not in the translated view",
                KvEventCounters::unknownRemoved);
        counter(registry, tags, kv, "gaps_repaired", "KV event sequence gaps filled from the engine's replay socket",
                KvEventCounters::gapsRepaired);
        counter(registry, tags, kv, "resyncs", "KV event gaps the replay socket could not fill; each resynced the view",
                KvEventCounters::gapsUnrepaired);
        counter(registry, tags, kv, "engine_restarts", "Engine restarts seen on the KV event stream",
                KvEventCounters::engineRestarts);
    }

    private static void counter(MeterRegistry registry, Tags tags, KvEventCounters kv, String name, String description,
                                ToDoubleFunction<KvEventCounters> value) {
        FunctionCounter.builder("flotilla.worker.kv_events." + name, kv, value)
                .description(description).tags(tags).register(registry);
    }

    private static void untranslatable(MeterRegistry registry, Tags tags, KvEventCounters kv, String reason,
                                       ToDoubleFunction<KvEventCounters> value) {
        FunctionCounter.builder("flotilla.worker.kv_events.untranslatable_blocks", kv, value)
                .description("Stored engine blocks left out of the Flotilla view, by reason")
                .tags(tags).tag("reason", reason).register(registry);
    }
}
