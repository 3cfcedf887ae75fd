package io.flotilla.worker.agent;

import io.flotilla.protocol.v1.KvTier;
import io.flotilla.worker.api.GenerationMeters;
import io.flotilla.worker.engine.AdapterSupport;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.KvTierStatus;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.kvbm.TierStats;
import io.flotilla.worker.kv.LeaseTable;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;

/** The metrics of one worker, tagged {@code worker=<id>}. */
public final class WorkerMetrics implements GenerationMeters {

    private final MeterRegistry registry;
    private final Tags tags;
    private final Counter prefixHitTokens;
    private final Counter prefillTokens;
    private final Timer step;
    private final Counter handoffsUsed;
    private final Counter transferBytes;
    private final Timer transfer;

    public WorkerMetrics(MeterRegistry registry, WorkerIdentity identity, Engine engine, KvEventPublisher events,
                         StatusReporter status) {
        this.registry = registry;
        Tags tags = tagsOf(identity);
        this.tags = tags;
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
        step = stepTimer(registry, identity);
        FunctionCounter.builder("flotilla.worker.kv_events_dropped", events, KvEventPublisher::dropped)
                .description("KV event batches dropped because Kafka was unreachable for too long").tags(tags)
                .register(registry);
        FunctionCounter.builder("flotilla.worker.kafka_publish_errors", this,
                        m -> events.publishErrors() + status.publishErrors())
                .description("Kafka sends that failed").tags(tags).register(registry);
        FunctionCounter.builder("flotilla.worker.kv_event_batches_published", events, KvEventPublisher::published)
                .description("KV event batches acknowledged by Kafka").tags(tags).register(registry);
        handoffsUsed = Counter.builder("flotilla.worker.handoffs_used")
                .description("Generate requests that continued from a prefill worker's KV handoff").tags(tags)
                .register(registry);
        transferBytes = Counter.builder("flotilla.worker.transfer_bytes")
                .description("KV bytes pulled from prefill workers").baseUnit("bytes").tags(tags).register(registry);
        transfer = Timer.builder("flotilla.worker.transfer")
                .description("Time to pull one handoff's missing KV blocks").tags(tags)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(30))
                .register(registry);
    }

    /** A handoff was refused before anything moved (incompatible, expired, unsupported). */
    @Override
    public void handoffRefused(String reason) {
        Counter.builder("flotilla.worker.handoffs_refused")
                .description("KV handoffs refused before any transfer, by reason; the prompt was prefilled locally")
                .tags(tags).tag("reason", reason).register(registry).increment();
    }

    /** An accepted handoff failed before the first decoded token (capacity, transfer, verification). */
    @Override
    public void handoffFallback(String reason) {
        Counter.builder("flotilla.worker.handoff_fallbacks")
                .description("KV handoffs that failed after acceptance, by reason; the prompt was prefilled locally")
                .tags(tags).tag("reason", reason).register(registry).increment();
    }

    @Override
    public void handoffUsed() {
        handoffsUsed.increment();
    }

    @Override
    public void kvTransferred(long bytes, Duration took) {
        transferBytes.increment(bytes);
        transfer.record(took);
    }

    /** Exports a prefill worker's lease counts. */
    @Override
    public void bindLeases(LeaseTable leases) {
        Gauge.builder("flotilla.worker.kv_leases_active", leases, LeaseTable::active)
                .description("KV transfer leases held (prefill blocks pinned for a decode worker)").tags(tags)
                .register(registry);
        FunctionCounter.builder("flotilla.worker.leases_granted", leases, LeaseTable::grantedTotal)
                .description("KV transfer leases granted by Prefill").tags(tags).register(registry);
        FunctionCounter.builder("flotilla.worker.leases_released", leases, LeaseTable::releasedTotal)
                .description("KV transfer leases released by ReleaseKvLease").tags(tags).register(registry);
        FunctionCounter.builder("flotilla.worker.leases_expired", leases, LeaseTable::expiredTotal)
                .description("KV transfer leases that expired unreleased (their blocks were unpinned)").tags(tags)
                .register(registry);
    }

    /**
     * Exports the KV tiers as {@code flotilla_worker_kvbm_*{tier=device|host|disk}}: capacity and use in
     * blocks, hits in prompt tokens, blocks and bytes offloaded into and onboarded out of each lower
     * tier, blocks that failed verification, and the wall time of each onboarding.
     */
    public void bindTiers(KvTierStatus status) {
        for (KvTierStatus.Tier t : status.tiers()) {
            KvTier tier = t.tier();
            Tags tt = tags.and("tier", tierName(tier));
            TierStats stats = t.stats();
            Gauge.builder("flotilla.worker.kvbm.capacity_blocks", status, s -> tierOf(s, tier).capacityBlocks())
                    .description("KV blocks the tier holds at most").tags(tt).register(registry);
            Gauge.builder("flotilla.worker.kvbm.used_blocks", status, s -> tierOf(s, tier).usedBlocks())
                    .description("KV blocks held in the tier").tags(tt).register(registry);
            FunctionCounter.builder("flotilla.worker.kvbm.hit_tokens", stats, TierStats::hitTokens)
                    .description("Prompt tokens whose KV requests found in the tier (device: reused; host, disk: onboarded)")
                    .tags(tt).register(registry);
            if (tier == KvTier.KV_TIER_DEVICE) {
                continue;
            }
            FunctionCounter.builder("flotilla.worker.kvbm.offloaded_blocks", stats, TierStats::offloadedBlocks)
                    .description("KV blocks copied into the tier from the tier above").tags(tt).register(registry);
            FunctionCounter.builder("flotilla.worker.kvbm.offloaded_bytes", stats, TierStats::offloadedBytes)
                    .description("KV bytes copied into the tier").baseUnit("bytes").tags(tt).register(registry);
            FunctionCounter.builder("flotilla.worker.kvbm.onboarded_blocks", stats, TierStats::onboardedBlocks)
                    .description("KV blocks copied from the tier into the device").tags(tt).register(registry);
            FunctionCounter.builder("flotilla.worker.kvbm.onboarded_bytes", stats, TierStats::onboardedBytes)
                    .description("KV bytes copied from the tier into the device").baseUnit("bytes").tags(tt).register(registry);
            FunctionCounter.builder("flotilla.worker.kvbm.corrupt_blocks", stats, TierStats::corruptBlocks)
                    .description("KV blocks that failed their checksum when onboarded (dropped and recomputed)").tags(tt)
                    .register(registry);
            FunctionCounter.builder("flotilla.worker.kvbm.skipped_offloads", stats, TierStats::skippedOffloads)
                    .description("Blocks not copied into the tier because the tier thread lagged (a quarter of the "
                            + "device pool was waiting for copies)").tags(tt).register(registry);
            FunctionCounter.builder("flotilla.worker.kvbm.io_errors", stats, TierStats::ioErrors)
                    .description("Tier reads or writes that failed").tags(tt).register(registry);
            Timer.builder("flotilla.worker.kvbm.onboard").description("Wall time to copy and verify one request's blocks "
                    + "from the tier (the modeled link time is charged on top in the simulation)").tags(tt)
                    .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
                    .maximumExpectedValue(Duration.ofSeconds(10)).register(registry);
        }
        status.observeOnboarding((tier, blocks, nanos) -> registry.timer("flotilla.worker.kvbm.onboard",
                tags.and("tier", tierName(tier))).record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS));
    }

    private static KvTierStatus.Tier tierOf(KvTierStatus status, KvTier tier) {
        for (KvTierStatus.Tier t : status.tiers()) {
            if (t.tier() == tier) {
                return t;
            }
        }
        throw new IllegalStateException("no " + tier + " tier");
    }

    /** The {@code tier} label of a tier: device, host, disk. */
    public static String tierName(KvTier tier) {
        return tier.name().replace("KV_TIER_", "").toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * @param importedTokens prompt tokens whose KV came from a prefill worker's handoff: neither a
     *                       prefix hit nor computed here
     */
    @Override
    public void requestFinished(int promptTokens, int cachedTokens, int importedTokens) {
        prefixHitTokens.increment(cachedTokens);
        prefillTokens.increment(Math.max(0, promptTokens - cachedTokens - importedTokens));
    }

    /**
     * The engine step timer of {@code identity}'s worker, as an engine's {@link io.flotilla.worker.engine.EngineListeners#stepMs()}
     * records into it: the engine is built (and may step) before this class binds the rest of the worker's meters.
     */
    public static Timer stepTimer(MeterRegistry registry, WorkerIdentity identity) {
        return Timer.builder("flotilla.worker.step")
                .description("Engine step duration").tags(tagsOf(identity))
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
    }

    /** Records one executed engine step of {@code stepMs} milliseconds. */
    public static void recordStep(Timer steps, double stepMs) {
        steps.record(Duration.ofNanos((long) (stepMs * 1_000_000)));
    }

    /**
     * A tenant-salted request was accepted; {@code publicBlocks} of its blocks are an allow-listed public prefix,
     * which an engine that salts every block keeps private too ({@code public_prefix="salted"}).
     */
    @Override
    public void saltedRequest(int publicBlocks, io.flotilla.protocol.v1.TenantIsolation isolation) {
        String publicPrefix = publicBlocks == 0 ? "no"
                : isolation == io.flotilla.protocol.v1.TenantIsolation.TENANT_ISOLATION_SALT_ALL_BLOCKS ? "salted" : "shared";
        Counter.builder("flotilla.worker.salted_requests")
                .description("Requests whose KV is private to their tenant (cache_scope.tenant_salt), by what became of "
                        + "their public prefix (no, shared, salted)").tags(tags).tag("public_prefix", publicPrefix)
                .register(registry).increment();
    }

    /** A request's cache scope was refused (its engine cannot keep tenants apart, or the scope is malformed). */
    @Override
    public void scopeRefused(String code) {
        Counter.builder("flotilla.worker.cache_scope_refusals")
                .description("Requests refused because the engine cannot hold their KV in their cache scope, by gRPC code")
                .tags(tags).tag("code", code).register(registry).increment();
    }

    @Override
    public void embedded(int inputs, int tokens) {
        Counter.builder("flotilla.worker.embedding_inputs")
                .description("Inputs embedded (one vector each)")
                .tags(tags).register(registry).increment(inputs);
        Counter.builder("flotilla.worker.embedding_tokens")
                .description("Tokens of the inputs embedded")
                .tags(tags).register(registry).increment(tokens);
    }

    /** Exports the engine's LoRA adapter slots (when it serves adapters). */
    public void bindAdapters(AdapterSupport adapters) {
        Gauge.builder("flotilla.worker.adapters_loaded", adapters, a -> a.adapterStatus().loaded().size())
                .description("LoRA adapters loaded in the engine").tags(tags).register(registry);
        Gauge.builder("flotilla.worker.adapter_slots", adapters, a -> a.adapterStatus().maxLoaded())
                .description("LoRA adapters the engine holds at once").tags(tags).register(registry);
        FunctionCounter.builder("flotilla.worker.adapter_loads", adapters, a -> a.adapterStatus().loads())
                .description("LoRA adapters loaded into the engine").tags(tags).register(registry);
        FunctionCounter.builder("flotilla.worker.adapter_unloads", adapters, a -> a.adapterStatus().unloads())
                .description("LoRA adapters unloaded to make room for another").tags(tags).register(registry);
        Gauge.builder("flotilla.worker.adapter_load_ms", adapters, a -> a.adapterStatus().loadMs())
                .description("What one adapter load costs, as advertised (measured or configured)").tags(tags)
                .register(registry);
    }

    /** The tags every meter of {@code identity}'s worker carries. */
    public static Tags tagsOf(WorkerIdentity identity) {
        return Tags.of("worker", identity.id(), "role", roleName(identity), "model", identity.model());
    }

    private static String roleName(WorkerIdentity identity) {
        return identity.role().name().replace("WORKER_ROLE_", "").toLowerCase(java.util.Locale.ROOT);
    }
}
