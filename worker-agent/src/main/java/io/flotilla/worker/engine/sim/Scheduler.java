package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.hash.ScopedHasher;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.EngineLoad;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.KvDigest;
import io.flotilla.worker.engine.KvEventListener;
import io.flotilla.worker.engine.PrefilledKv;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.ResidentBlocks;
import io.flotilla.worker.engine.TokenLogprob;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.kvbm.LowerTiers;
import io.flotilla.worker.kvbm.TierIo;
import io.flotilla.worker.kvbm.TierStats;
import io.flotilla.worker.kvbm.TierThread;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The simulated engine's scheduler: continuous batching over a {@link BlockPool}, in simulated time.
 * Pure and single-threaded: it never reads a clock or sleeps; callers pass the time and serialise
 * calls. A step is {@link #schedule} (choose work and hold its blocks, see {@link BatchPlanner})
 * followed by {@link #complete} (compute it: register full blocks, sample tokens, finish requests);
 * a driver sleeps the plan's {@code stepMs} in between, and {@link #step} does both at once.
 *
 * <p>KV events go to the listener at the end of every public operation that changed the resident
 * set, one batch per operation, so between calls the event position and the pool always agree.
 *
 * <p>Disaggregated serving ({@link KvExchange}) adds prefill-only sequences, whose prompt blocks end
 * pinned by a {@link PromptPin} instead of released, and continuations of requests prefilled
 * elsewhere, over blocks brought in by a {@link BlockImport}.
 *
 * <p>Each request's blocks are hashed in its {@link KvScope} (LoRA adapter, tenant salt after its public
 * prefix), so a prefix is only found resident for requests of the same scope, and every KV event is in
 * that scope's namespace. LoRA adapters occupy {@link AdapterTable} slots.
 *
 * <p>With lower KV tiers ({@link LowerTiers}, host memory and disk) every freshly registered block is
 * copied down off this thread, and a waiting sequence's prefix found there is onboarded when that is
 * cheaper than recomputing it ({@link TierIntake}). The tiers' events join this scheduler's batches.
 */
public final class Scheduler {

    private static final System.Logger LOG = System.getLogger(Scheduler.class.getName());

    private final SimEngineConfig config;
    private final int blockSize;
    private final BlockHasher hasher;
    private final BlockPool pool;
    private final AdapterTable adapters;
    private final KvEventListener eventListener;
    private final ArrayDeque<Sequence> waiting = new ArrayDeque<>();
    private final List<Sequence> running = new ArrayList<>();
    private final Map<String, Sequence> inFlight = new HashMap<>();
    private final List<Sequence> deferredCancels = new ArrayList<>();
    private final BatchPlanner planner;
    private final SimReplies replies;
    /** The plan scheduled and not yet completed; at most one exists. */
    private StepPlan outstanding;
    private long eventPosition;
    private boolean draining;
    private boolean inStep;
    private double lastStepMs;
    private final TierStats deviceStats = new TierStats(KvTier.KV_TIER_DEVICE);
    /** The KV tiers below the pool; null without them. */
    private final LowerTiers tiers;

    /** A scheduler whose lower tiers (if configured) copy on a thread of their own. */
    public Scheduler(SimEngineConfig config, KvEventListener eventListener) {
        this(config, eventListener, null, tierThread(config, "kv-tiers"));
    }

    /** @param tierIo where the lower tiers' copies run; unused (may be null) without lower tiers */
    public Scheduler(SimEngineConfig config, KvEventListener eventListener, TierIo tierIo) {
        this(config, eventListener, null, tierIo);
    }

    /** A scheduler whose requests are answered by {@code script} where it has a rule for their prompt. */
    public Scheduler(SimEngineConfig config, KvEventListener eventListener, SimScript script) {
        this(config, eventListener, script, tierThread(config, "kv-tiers"));
    }

    /** A thread named {@code name} for the lower tiers' copies when {@code config} has lower tiers, else null. */
    static TierIo tierThread(SimEngineConfig config, String name) {
        return config.tiers().enabled() ? new TierThread(name) : null;
    }

    /**
     * @param script replies for the prompts it has rules for (null: none)
     * @param tierIo where the lower tiers' copies run; unused (may be null) without lower tiers
     */
    public Scheduler(SimEngineConfig config, KvEventListener eventListener, SimScript script, TierIo tierIo) {
        this(config, eventListener, script, tierIo, null);
    }

    /**
     * @param tierOwner where the lower tiers' copies come back to change what the tiers hold: the engine that
     *                  drives this scheduler; null when the caller drives it alone (tests), which then runs
     *                  each change on the tier thread and publishes its events at once
     */
    Scheduler(SimEngineConfig config, KvEventListener eventListener, SimScript script, TierIo tierIo,
              LowerTiers.Owner tierOwner) {
        this.config = config;
        this.replies = new SimReplies(config, script);
        this.blockSize = config.blockSize();
        this.hasher = new BlockHasher(config.namespace(), blockSize);
        KvPayloadStore payloads = config.kvBytesPerBlock() == 0 ? null
                : new KvPayloadStore(config.totalBlocks(), config.kvBytesPerBlock(), config.namespace().kvLayout());
        this.pool = new BlockPool(config.totalBlocks(), payloads);
        this.eventListener = eventListener;
        TierIntake intake = null;
        if (config.tiers().enabled()) {
            LowerTiers.Owner owner = tierOwner != null ? tierOwner : change -> {
                change.run();
                flushEvents();
            };
            tiers = new LowerTiers(config.tiers(), config.kvBytesPerBlock(), hasher.namespaceSeed(), config.speedup(),
                    tierIo, pool.events(), owner);
            pool.setRegistrationHook(this::offload);
            intake = new TierIntake(config, pool, tiers, deviceStats);
        } else {
            tiers = null;
        }
        this.adapters = new AdapterTable(config.adapters(), config.speedup());
        this.planner = new BatchPlanner(config, adapters, pool, running, waiting, intake, deviceStats);
    }

    /**
     * A freshly registered block is copied down to host memory (write-through), off this thread. At most
     * a quarter of the pool (or one full step's blocks, if more) waits for copies at once: when the tier
     * thread falls behind, further blocks are not copied (counted), so offloading never starves
     * admission of device blocks.
     */
    private void offload(int slot, long seqHash) {
        int limit = Math.max(pool.totalBlocks() / 4, config.maxBatchTokens() / blockSize);
        if (pool.copyingBlocks() >= limit) {
            tiers.skippedOffload();
            return;
        }
        if (tiers.wantsOffload(seqHash)) {
            pool.holdForCopy(slot);
            tiers.offload(seqHash, pool.payloads().block(slot), () -> pool.copyDone(slot));
        }
    }

    /**
     * Queues a request at the back of the waiting queue.
     *
     * @throws InvalidRequestException    see {@link RequestValidator}, or a duplicate in-flight id
     * @throws EngineUnavailableException while draining
     * @throws EngineOverloadedException  when {@code maxWaiting} requests already wait
     */
    public RequestHandle submit(EngineRequest request, TokenSink sink) {
        checkAdmissible(request);
        return enqueue(sequence(request, sink, TokenSampler.streamSeed(request, config.seed())));
    }

    /**
     * A new sequence with its sampler, hashing its blocks in the request's scope; throws
     * {@link InvalidRequestException} for output the engine cannot write.
     */
    Sequence sequence(EngineRequest request, TokenSink sink, long streamSeed) {
        Sequence seq = new Sequence(request, sink, streamSeed, scoped(request.scope()));
        seq.sampler = replies.samplerFor(request, streamSeed);
        return seq;
    }

    ScopedHasher scoped(KvScope scope) {
        return ScopedHasher.of(hasher, scope);
    }

    /** The sampling features this engine honours. */
    public io.flotilla.protocol.v1.EngineCapabilities capabilities() {
        return replies.capabilities();
    }

    /** The checks every new request passes before it is queued. */
    void checkAdmissible(EngineRequest request) {
        RequestValidator.validate(request, config);
        adapters.check(request.scope().loraName());
        String id = request.requestId();
        if (draining) {
            throw new EngineUnavailableException("engine is draining; request " + id + " not accepted");
        }
        if (inFlight.containsKey(id)) {
            throw new InvalidRequestException("request id " + id + " is already in flight");
        }
        if (waiting.size() >= config.maxWaiting()) {
            throw new EngineOverloadedException("waiting queue is full (" + config.maxWaiting() + " requests)");
        }
    }

    RequestHandle enqueue(Sequence seq) {
        adapters.retain(seq.adapter);
        waiting.addLast(seq);
        inFlight.put(seq.id, seq);
        return new Handle(seq);
    }

    /** Runs one whole step at simulated time {@code nowMs}. */
    public StepReport step(long nowMs) {
        return complete(schedule(nowMs));
    }

    /**
     * Expires deadlines, then chooses this step's work and holds its blocks (evicting as needed).
     * A non-empty plan must be {@link #complete completed} before the next one is scheduled; an empty
     * one holds nothing and needs no completion.
     */
    public StepPlan schedule(long nowMs) {
        if (outstanding != null) {
            throw new IllegalStateException("the previous step plan was not completed");
        }
        inStep = true;
        try {
            expireDeadlines(nowMs);
            StepPlan plan = planner.plan(nowMs);
            outstanding = plan.isEmpty() ? null : plan;
            return plan;
        } finally {
            endStep();
        }
    }

    /**
     * Computes a plan made by {@link #schedule}: work of sequences cancelled or expired since is
     * skipped. Full blocks are registered, every sequence that computed its last token samples one,
     * and sequences that hit a stop token or max tokens finish and release their blocks.
     */
    public StepReport complete(StepPlan plan) {
        if (plan.isEmpty() && plan != outstanding) {
            return new StepReport(plan, List.of(), List.of());
        }
        if (plan != outstanding) {
            throw new IllegalStateException("not the outstanding step plan");
        }
        outstanding = null;
        List<String> sampled = new ArrayList<>();
        List<String> finished = new ArrayList<>();
        inStep = true;
        try {
            for (StepPlan.Entry e : plan.entries()) {
                Sequence seq = e.sequence();
                if (seq.state != Sequence.State.RUNNING || seq.computed != e.computedBefore() || seq.onboarding != null) {
                    continue; // cancelled, preempted, cut back by a failed onboarding, or its KV not verified yet
                }
                int before = seq.computed;
                seq.computed = before + e.tokens();
                registerFullBlocks(seq, before, seq.computed);
                if (seq.computed == seq.length) {
                    int token = seq.sampler.next(seq);
                    seq.appendToken(token);
                    seq.decoding = true;
                    sampled.add(seq.id);
                    TokenLogprob logprob = seq.sampler.lastLogprob();
                    seq.emitTokens(new int[] {token}, logprob == null ? null : new TokenLogprob[] {logprob});
                    FinishReason reason = finishReason(seq, token);
                    if (reason != null && !seq.sinkFailed) {
                        PrefilledKv pinned = seq.prefillSink == null ? null : PromptPin.pin(seq, pool, blockSize);
                        retire(seq);
                        finished.add(seq.id);
                        if (pinned != null) {
                            seq.emitPrefilled(pinned);
                        } else {
                            seq.emitFinish(reason);
                        }
                    }
                }
                if (seq.sinkFailed && seq.state != Sequence.State.FINISHED) {
                    retire(seq);
                }
            }
        } finally {
            running.removeIf(s -> s.state == Sequence.State.FINISHED);
            lastStepMs = plan.isEmpty() ? lastStepMs : plan.stepMs();
            endStep();
        }
        return new StepReport(plan, sampled, finished);
    }

    /** Cancels an in-flight request by id; false when none is in flight under that id. */
    public boolean cancel(String requestId) {
        Sequence seq = inFlight.get(requestId);
        return seq != null && cancel(seq);
    }

    /** Drops every cached block (see {@link BlockPool#clearCached}) and every lower-tier block; returns how many. */
    public int clearCache() {
        int dropped = pool.clearCached();
        if (tiers != null) {
            dropped += tiers.clear();
        }
        flushEvents();
        return dropped;
    }

    /** Stops admitting new requests; in-flight ones run to the end. */
    public void startDrain() {
        draining = true;
    }

    public boolean isDraining() {
        return draining;
    }

    /** True when no request is running or waiting. */
    public boolean isIdle() {
        return running.isEmpty() && waiting.isEmpty();
    }

    /** Ends every in-flight request with {@code onError(error)} and releases its blocks. */
    public void failAll(EngineException error) {
        List<Sequence> all = new ArrayList<>(running);
        all.addAll(waiting);
        running.clear();
        waiting.clear();
        for (Sequence seq : all) {
            retire(seq);
            seq.emitError(error);
        }
        flushEvents();
    }

    /** Resident blocks of every tier with the position of the last event batch delivered. */
    public ResidentBlocks residentBlocks() {
        if (tiers == null) {
            return new ResidentBlocks(eventPosition, pool.residentSeqHashes());
        }
        return new ResidentBlocks(eventPosition, pool.residentSeqHashes(), tiers.seqHashes(KvTier.KV_TIER_HOST),
                tiers.seqHashes(KvTier.KV_TIER_DISK));
    }

    /** Count and XOR of every tier's blocks, in O(1). */
    public KvDigest kvDigest() {
        if (tiers == null) {
            return new KvDigest(eventPosition, pool.residentBlocks(), pool.residentXor(), 0, 0, 0, 0);
        }
        return new KvDigest(eventPosition, pool.residentBlocks(), pool.residentXor(),
                tiers.used(KvTier.KV_TIER_HOST), tiers.xor(KvTier.KV_TIER_HOST),
                tiers.used(KvTier.KV_TIER_DISK), tiers.xor(KvTier.KV_TIER_DISK));
    }

    /** The lower KV tiers, or null without them. */
    public LowerTiers tiers() {
        return tiers;
    }

    /** The device tier's hit counter. */
    public TierStats deviceStats() {
        return deviceStats;
    }

    /** Stops the lower tiers' copies and releases their memory and files; the pool is not touched after. */
    public void closeTiers() {
        if (tiers != null) {
            tiers.close();
        }
    }

    public EngineLoad load() {
        long prefillTokens = 0;
        for (Sequence s : waiting) {
            prefillTokens += s.length - Math.min(s.length, s.slotCount() * blockSize); // a continuation holds imported blocks
        }
        for (Sequence s : running) {
            prefillTokens += s.decoding ? 0 : s.remaining();
        }
        return new EngineLoad(running.size(), waiting.size(), prefillTokens, pool.activeBlocks(),
                pool.totalBlocks(), lastStepMs);
    }

    /** The position of the last KV event batch delivered (0 before any). */
    public long eventPosition() {
        return eventPosition;
    }

    /** The LoRA slots; empty status when the engine serves no adapter. */
    AdapterTable adapters() {
        return adapters;
    }

    /** The pool, for inspection and KV transfer; mutate it only through the scheduler. */
    public BlockPool pool() {
        return pool;
    }

    public SimEngineConfig config() {
        return config;
    }

    /** The slots holding running request {@code requestId}'s blocks, in block order; empty if not running. */
    public int[] slotsOf(String requestId) {
        Sequence seq = inFlight.get(requestId);
        int n = seq == null ? 0 : seq.slotCount();
        int[] out = new int[n];
        for (int b = 0; b < n; b++) {
            out[b] = seq.slot(b);
        }
        return out;
    }

    // --- deadlines ---

    private void expireDeadlines(long nowMs) {
        expire(running.iterator(), nowMs);
        expire(waiting.iterator(), nowMs);
    }

    private void expire(Iterator<Sequence> it, long nowMs) {
        while (it.hasNext()) {
            Sequence seq = it.next();
            if (seq.deadlineMs <= nowMs) {
                it.remove();
                retire(seq);
                seq.emitError(new DeadlineExceededException("request " + seq.id + " passed its deadline"));
            }
        }
    }

    // --- completion ---

    /** Registers the blocks that became full while computing tokens [before, after). */
    private void registerFullBlocks(Sequence seq, int before, int after) {
        for (int b = before / blockSize; b < after / blockSize; b++) {
            long parent = b == 0 ? 0 : seq.seqHash(b - 1);
            int held = pool.register(seq.slot(b), parent, seq.seqHash(b), seq.localHash(b));
            seq.replaceSlot(b, held);
        }
    }

    /** STOP on a stop token or eos (never eos under ignore_eos), LENGTH at max tokens, else null. */
    FinishReason finishReason(Sequence seq, int token) {
        boolean eos = token == config.eosTokenId();
        if (!(eos && seq.request.ignoreEos())) {
            if (eos) {
                return FinishReason.FINISH_REASON_STOP;
            }
            for (int stop : seq.request.stopTokenIds()) {
                if (stop == token) {
                    return FinishReason.FINISH_REASON_STOP;
                }
            }
        }
        return seq.generated >= seq.request.maxTokens() ? FinishReason.FINISH_REASON_LENGTH : null;
    }

    // --- lifecycle ---

    private boolean cancel(Sequence seq) {
        if (seq.state == Sequence.State.FINISHED) {
            return false;
        }
        if (inStep) {
            deferredCancels.add(seq);
            return true;
        }
        if (seq.state == Sequence.State.WAITING) {
            waiting.remove(seq);
        } else {
            running.remove(seq);
        }
        retire(seq);
        seq.emitFinish(FinishReason.FINISH_REASON_CANCELLED);
        flushEvents();
        return true;
    }

    /** Releases a sequence's blocks and forgets it; the caller removes it from its queue. */
    private void retire(Sequence seq) {
        seq.releaseBlocks(pool);
        if (seq.state != Sequence.State.FINISHED) {
            adapters.release(seq.adapter);
        }
        seq.onboarding = null;
        seq.state = Sequence.State.FINISHED;
        inFlight.remove(seq.id, seq);
    }

    private void endStep() {
        inStep = false;
        flushEvents();
        if (!deferredCancels.isEmpty()) {
            List<Sequence> cancels = new ArrayList<>(deferredCancels);
            deferredCancels.clear();
            cancels.forEach(this::cancel);
        }
    }

    void flushEvents() {
        if (tiers != null) {
            tiers.submit(); // this operation's registrations, copied down as one job
        }
        if (!pool.hasPendingEvents()) {
            return;
        }
        List<KvEvent> events = pool.drainEvents();
        eventPosition++;
        try {
            eventListener.onEvents(eventPosition, events);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "KV event listener failed at position " + eventPosition, e);
        }
    }

    /** A request's handle; cancel goes through the scheduler, so callers must serialise it too. */
    final class Handle implements RequestHandle {
        private final Sequence seq;

        Handle(Sequence seq) {
            this.seq = seq;
        }

        @Override
        public String requestId() {
            return seq.id;
        }

        @Override
        public void cancel() {
            Scheduler.this.cancel(seq);
        }
    }
}
