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
 *       sequence whose LoRA adapter is not loaded yet ({@link AdapterTable}) is passed over until it is.</li>
 * </ol>
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

    BatchPlanner(SimEngineConfig config, AdapterTable adapters, BlockPool pool, List<Sequence> running,
                 Deque<Sequence> waiting) {
        this.config = config;
        this.blockSize = config.blockSize();
        this.adapters = adapters;
        this.pool = pool;
        this.running = running;
        this.waiting = waiting;
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
        plan.stepMs(config.timing().stepMs(plan.prefillTokens(), plan.decodes(), kvUsage) / config.speedup());
        return plan;
    }

    /** Schedules decodes ({@code decodes}) or prefill chunks of running sequences, oldest first. */
    private void scheduleRunning(StepPlan plan, boolean decodes) {
        for (int i = 0; i < running.size() && plan.budgetLeft() > 0; i++) {
            Sequence seq = running.get(i);
            if (seq.decoding != decodes) {
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
            int cachedTokens = matched * blockSize;
            int tokens = Math.min(seq.length - cachedTokens, plan.budgetLeft());
            int needed = blocksFor(cachedTokens + tokens) - matched;
            if (needed > pool.availableBlocks() - matchedCached) {
                return;
            }
            queue.remove();
            seq.releaseBlocks(pool); // a continuation's imported blocks, held while it waited; matched below
            for (int b = 0; b < matched; b++) {
                int slot = pool.lookup(seq.seqHash(b));
                pool.retain(slot);
                seq.addSlot(slot);
            }
            for (int i = 0; i < needed; i++) {
                seq.addSlot(pool.allocate());
            }
            seq.computed = cachedTokens;
            if (seq.cachedTokens < 0) {
                seq.cachedTokens = cachedTokens;
            }
            seq.state = Sequence.State.RUNNING;
            running.add(seq);
            plan.admitted(seq);
            plan.add(seq, tokens, true);
        }
    }

    private int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }
}
