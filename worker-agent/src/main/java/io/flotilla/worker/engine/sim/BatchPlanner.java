package io.flotilla.worker.engine.sim;

import java.util.Deque;
import java.util.Iterator;
import java.util.List;

/**
 * Chooses one step's work for a {@link Scheduler} and holds the blocks it needs. It works on the
 * scheduler's own queues (running in admission order, waiting FIFO with preempted sequences at the
 * front); only the scheduler calls it, under the scheduler's single-threaded contract.
 *
 * <p>Order, under a budget of {@code maxBatchTokens} tokens:
 * <ol>
 *   <li>decodes of running sequences, oldest first (one token each), so prefill never starves them;</li>
 *   <li>prefill chunks of running sequences not done prefilling, oldest first;</li>
 *   <li>admission from the waiting queue while fewer than {@code maxRunning} run, skipped in a step
 *       that preempted. A sequence starts from the longest resident prefix of its tokens, excluding
 *       the last token (it must be computed to sample), and prefills at most the remaining budget
 *       (a continuation's imported blocks are part of that prefix: it releases the references it
 *       held while waiting and takes them again, with no allocation in between);
 *       admission stops at the first sequence whose chunk cannot get blocks without preempting. A
 *       sequence whose LoRA adapter is not loaded yet ({@link AdapterTable}) is passed over until it is. When
 *       lower KV tiers hold the blocks after the resident prefix and onboarding them is cheaper than
 *       recomputing ({@link TierIntake}), the sequence is admitted with those blocks on their way in and
 *       its first chunk after them is planned in the same step, which then lasts at least the modeled
 *       transfer time; the chunk counts only if the copies verified by the time the step completes.</li>
 * </ol>
 * Sequences whose onboarded KV has not verified yet are skipped.
 * When a running sequence needs a block and none is free or evictable, the youngest running
 * sequence is preempted by recompute: its blocks are released (they stay cached, so recompute often
 * hits them) and it goes back to the front of the waiting queue.
 */
final class BatchPlanner {

    private final SimEngineConfig config;
    private final int blockSize;
    private final AdapterTable adapters;
    private final BlockPool pool;
    private final List<Sequence> running;
    private final Deque<Sequence> waiting;
    /** Onboarding from lower KV tiers; null without them. */
    private final TierIntake intake;
    private final io.flotilla.worker.kvbm.TierStats deviceStats;

    BatchPlanner(SimEngineConfig config, AdapterTable adapters, BlockPool pool, List<Sequence> running,
                 Deque<Sequence> waiting, TierIntake intake, io.flotilla.worker.kvbm.TierStats deviceStats) {
        this.config = config;
        this.blockSize = config.blockSize();
        this.adapters = adapters;
        this.pool = pool;
        this.running = running;
        this.waiting = waiting;
        this.intake = intake;
        this.deviceStats = deviceStats;
    }

    /** Plans a step at {@code nowMs}; the plan's duration follows the timing model and speedup. */
    StepPlan plan(long nowMs) {
        StepPlan plan = new StepPlan(nowMs, config.maxBatchTokens());
        scheduleRunning(plan, true);
        scheduleRunning(plan, false);
        if (plan.preempted().isEmpty()) {
            admitWaiting(plan);
        }
        double kvUsage = (double) pool.activeBlocks() / pool.totalBlocks();
        plan.stepMs(Math.max(plan.onboardingMs(),
                config.timing().stepMs(plan.prefillTokens(), plan.decodes(), kvUsage) / config.speedup()));
        return plan;
    }

    /** Schedules decodes ({@code decodes}) or prefill chunks of running sequences, oldest first. */
    private void scheduleRunning(StepPlan plan, boolean decodes) {
        for (int i = 0; i < running.size() && plan.budgetLeft() > 0; i++) {
            Sequence seq = running.get(i);
            if (seq.decoding != decodes || (!decodes && seq.awaitingKv())) {
                continue;
            }
            int tokens = decodes ? 1 : Math.min(seq.remaining(), plan.budgetLeft());
            if (reserve(seq, tokens, plan)) {
                plan.add(seq, tokens, !decodes);
            }
        }
    }

    /** Holds blocks for {@code tokens} more tokens of {@code seq}; false when {@code seq} itself was preempted. */
    private boolean reserve(Sequence seq, int tokens, StepPlan plan) {
        int needed = blocksFor(seq.computed + tokens) - seq.slotCount();
        while (needed > 0) {
            int slot = pool.allocate();
            if (slot >= 0) {
                seq.addSlot(slot);
                needed--;
                continue;
            }
            Sequence victim = running.remove(running.size() - 1);
            preempt(victim, plan);
            if (victim == seq) {
                return false;
            }
        }
        return true;
    }

    private void preempt(Sequence victim, StepPlan plan) {
        plan.drop(victim);
        victim.releaseBlocks(pool);
        victim.onboarding = null; // its copies keep their own references and end without it
        victim.computed = 0;
        victim.decoding = false;
        victim.state = Sequence.State.WAITING;
        waiting.addFirst(victim);
    }

    private void admitWaiting(StepPlan plan) {
        Iterator<Sequence> queue = waiting.iterator();
        while (queue.hasNext() && running.size() < config.maxRunning() && plan.budgetLeft() > 0) {
            Sequence seq = queue.next();
            if (!adapters.ready(seq.adapter, plan.nowMs())) {
                continue; // its adapter is loading or waits for a slot; the requests behind it may run
            }
            int matched = 0;
            int matchedCached = 0;
            for (int max = (seq.length - 1) / blockSize; matched < max; matched++) {
                int slot = pool.lookup(seq.seqHash(matched));
                if (slot < 0) {
                    break;
                }
                matchedCached += pool.isCached(slot) ? 1 : 0;
            }
            TierIntake.Run run = intake == null ? null : intake.plan(seq, matched, (seq.length - 1) / blockSize);
            if (run != null) {
                int onboarded = (matched + run.blocks()) * blockSize;
                int chunk = Math.min(seq.length - onboarded, plan.budgetLeft());
                int fresh = blocksFor(onboarded + chunk) - matched - run.blocks();
                if (run.lower() + fresh > pool.availableBlocks() - matchedCached - intake.cachedInRun(seq, run)) {
                    return;
                }
                queue.remove(); // not always the first: sequences waiting for an adapter are passed over
                holdPrefix(seq, matched);
                seq.state = Sequence.State.RUNNING;
                running.add(seq);
                plan.admitted(seq);
                intake.start(seq, run);
                for (int i = 0; i < fresh; i++) {
                    seq.addSlot(pool.allocate());
                }
                // Computes the rest of the prompt in this same step: the step lasts at least as long as the
                // transfer, and completing it requires the copies to have verified (else no progress).
                seq.computed = onboarded;
                plan.onboarding(run.onboardMs);
                plan.add(seq, chunk, true);
                continue;
            }
            int cachedTokens = matched * blockSize;
            int tokens = Math.min(seq.length - cachedTokens, plan.budgetLeft());
            int needed = blocksFor(cachedTokens + tokens) - matched;
            if (needed > pool.availableBlocks() - matchedCached) {
                return;
            }
            queue.remove();
            holdPrefix(seq, matched);
            for (int i = 0; i < needed; i++) {
                seq.addSlot(pool.allocate());
            }
            seq.computed = cachedTokens;
            if (seq.cachedTokens < 0) {
                seq.cachedTokens = cachedTokens;
                deviceStats.addHitTokens(cachedTokens);
            }
            seq.state = Sequence.State.RUNNING;
            running.add(seq);
            plan.admitted(seq);
            plan.add(seq, tokens, true);
        }
    }

    /** Takes {@code seq}'s first {@code matched} blocks, resident on the device, as its own. */
    private void holdPrefix(Sequence seq, int matched) {
        seq.releaseBlocks(pool); // a continuation's imported blocks, held while it waited; matched below
        for (int b = 0; b < matched; b++) {
            long h = seq.seqHash(b);
            int slot = pool.lookup(h);
            pool.retain(slot);
            seq.addSlot(slot);
            if (intake != null) {
                intake.touchLower(h);
            }
        }
    }

    private int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }
}
