package io.flotilla.worker.engine.sim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One step's schedule, made by {@link Scheduler#schedule} and consumed once by
 * {@link Scheduler#complete}. Blocks for the planned tokens are already held when the plan exists.
 */
public final class StepPlan {

    /** Work given to one sequence in the step. */
    public record Work(String requestId, int tokens, boolean prefill) {
    }

    record Entry(Sequence sequence, int tokens, int computedBefore, boolean prefill) {
    }

    private final long nowMs;
    private final List<Entry> entries = new ArrayList<>();
    private final List<String> admitted = new ArrayList<>();
    private final List<String> preempted = new ArrayList<>();
    private int budgetLeft;
    private double stepMs;
    private double onboardingMs;

    StepPlan(long nowMs, int tokenBudget) {
        this.nowMs = nowMs;
        this.budgetLeft = tokenBudget;
    }

    public long nowMs() {
        return nowMs;
    }

    /** Simulated duration of the step in milliseconds, speedup applied; 0 when nothing is planned. */
    public double stepMs() {
        return stepMs;
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }


    /** The planned work in execution order: decodes first, then prefill chunks. */
    public List<Work> work() {
        List<Work> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            out.add(new Work(e.sequence().id, e.tokens(), e.prefill()));
        }
        return out;
    }

    /** Uncached prompt tokens computed in the step. */
    public long prefillTokens() {
        long n = 0;
        for (Entry e : entries) {
            n += e.prefill() ? e.tokens() : 0;
        }
        return n;
    }

    /** Sequences decoding one token in the step. */
    public int decodes() {
        int n = 0;
        for (Entry e : entries) {
            n += e.prefill() ? 0 : 1;
        }
        return n;
    }

    /** Requests moved from waiting to running in this step. */
    public List<String> admitted() {
        return Collections.unmodifiableList(admitted);
    }

    /** Requests preempted (blocks released, back to the front of the queue) in this step. */
    public List<String> preempted() {
        return Collections.unmodifiableList(preempted);
    }

    // Scheduler side.

    int budgetLeft() {
        return budgetLeft;
    }

    void add(Sequence sequence, int tokens, boolean prefill) {
        entries.add(new Entry(sequence, tokens, sequence.computed, prefill));
        budgetLeft -= tokens;
    }

    /** Drops a preempted sequence's work, returning its tokens to the budget. */
    void drop(Sequence sequence) {
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (entries.get(i).sequence() == sequence) {
                budgetLeft += entries.remove(i).tokens();
            }
        }
        preempted.add(sequence.id);
    }

    void admitted(Sequence sequence) {
        admitted.add(sequence.id);
    }

    List<Entry> entries() {
        return entries;
    }

    void stepMs(double ms) {
        this.stepMs = ms;
    }

    /** A sequence admitted in this step onboards KV taking {@code ms} over its link: the step lasts at least that. */
    void onboarding(double ms) {
        onboardingMs = Math.max(onboardingMs, ms);
    }

    double onboardingMs() {
        return onboardingMs;
    }
}
