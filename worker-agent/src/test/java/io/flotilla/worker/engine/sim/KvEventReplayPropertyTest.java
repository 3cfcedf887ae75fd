package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.RequestHandle;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeded simulation: for any sequence of submits, cancels, steps (whole, or split with a cancel
 * between schedule and complete) and cache clears on a small, contended engine,
 * <ul>
 *   <li>"replaying the KV events gives exactly the engine's resident blocks, at the snapshot's position";</li>
 *   <li>"no running sequence references a block the events do not show as resident";</li>
 *   <li>"no refcount is negative and free + active + cached == total";</li>
 *   <li>"every stored block's parent is resident, nothing is stored twice or removed while absent";</li>
 *   <li>"every accepted request ends with exactly one terminal callback, and the pool is then unreferenced".</li>
 * </ul>
 */
class KvEventReplayPropertyTest {

    // 12 blocks of 4 tokens, at most 3 running, 10 tokens a step: preemption and eviction are common.
    private static final SimEngineConfig CONFIG = SimEngineConfig.builder().blockSize(4).totalBlocks(12)
            .maxRunning(3).maxBatchTokens(10).maxWaiting(4).maxContextTokens(48).kvBytesPerBlock(64).seed(3).build();

    sealed interface Op permits Submit, Cancel, Step, SplitStep, Clear {
    }

    /** A prompt sharing the first 12 tokens of family {@code family}, then a tail chosen by {@code tail}. */
    record Submit(int family, int length, int tail, int maxTokens) implements Op {
    }

    record Cancel(int pick) implements Op {
    }

    record Step(int count) implements Op {
    }

    record SplitStep(int pick) implements Op {
    }

    record Clear() implements Op {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> submit = Combinators.combine(Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(1, 24), Arbitraries.integers().between(0, 3),
                Arbitraries.integers().between(1, 12)).as(Submit::new);
        Arbitrary<Op> cancel = Arbitraries.integers().between(0, 50).map(Cancel::new);
        Arbitrary<Op> step = Arbitraries.integers().between(1, 6).map(Step::new);
        Arbitrary<Op> split = Arbitraries.integers().between(0, 50).map(SplitStep::new);
        Arbitrary<Op> clear = Arbitraries.just(new Clear());
        return Arbitraries.frequencyOf(Tuple.of(5, submit), Tuple.of(1, cancel), Tuple.of(6, step),
                Tuple.of(1, split), Tuple.of(1, clear)).list().ofMinSize(1).ofMaxSize(80);
    }

    @Property(seed = "424242", tries = 400)
    void eventsReplayToTheResidentSetUnderAnyWorkload(@ForAll("ops") List<Op> ops) {
        Run run = new Run(new KvEventReplay());
        for (Op op : ops) {
            run.apply(op);
            assertThat(run.breaches()).as("after " + op).isEmpty();
        }
        run.finish();
        assertThat(run.breaches()).as("after draining").isEmpty();
        assertThat(run.scheduler.pool().activeBlocks()).isZero();
        assertThat(run.sinks.values()).allSatisfy(sink -> {
            assertThat(sink.done()).isTrue();
            if (sink.finishReason != null) {
                assertThat(sink.completionTokens).isEqualTo(sink.tokens.size());
            }
        });
        Statistics.label("preempted").collect(run.preemptions > 0);
        Statistics.label("evicted").collect(!run.replay.removedInOrder().isEmpty());
        Statistics.label("cleared").collect(run.replay.events.stream().anyMatch(e -> e.hasCleared()));
        // The workload must keep reaching the paths the invariants are about.
        Statistics.label("preempted").coverage(c -> c.check(true).percentage(p -> p > 10));
        Statistics.label("evicted").coverage(c -> c.check(true).percentage(p -> p > 20));
        Statistics.label("cleared").coverage(c -> c.check(true).percentage(p -> p > 5));
    }

    /** One simulated workload against a scheduler whose events feed {@code replay}. */
    static final class Run {
        final Scheduler scheduler;
        final KvEventReplay replay;
        final Map<String, RecordingSink> sinks = new LinkedHashMap<>();
        final List<RequestHandle> handles = new ArrayList<>();
        int preemptions;
        private long now;
        private int next;

        Run(KvEventReplay replay) {
            this(replay, replay);
        }

        Run(KvEventReplay replay, io.flotilla.worker.engine.KvEventListener listener) {
            this.replay = replay;
            this.scheduler = new Scheduler(CONFIG, listener);
        }

        void apply(Op op) {
            if (op instanceof Submit s) {
                submit(s);
            } else if (op instanceof Cancel c) {
                cancel(c.pick());
            } else if (op instanceof Step s) {
                for (int i = 0; i < s.count(); i++) {
                    step();
                }
            } else if (op instanceof SplitStep s) {
                StepPlan plan = scheduler.schedule(now);
                preemptions += plan.preempted().size();
                cancel(s.pick());
                scheduler.complete(plan);
            } else if (op instanceof Clear) {
                scheduler.clearCache();
            }
        }

        void finish() {
            for (int i = 0; i < 10_000 && !scheduler.isIdle(); i++) {
                step();
            }
            assertThat(scheduler.isIdle()).as("all work finishes").isTrue();
        }

        private void step() {
            StepReport r = scheduler.step(now);
            preemptions += r.plan().preempted().size();
            now += (long) Math.ceil(r.stepMs());
        }

        List<String> breaches() {
            return EngineInvariants.check(scheduler, replay, sinks.keySet());
        }

        private void submit(Submit s) {
            int[] tokens = new int[s.length()];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = i < 12 ? 100 * s.family() + i : 5000 + 100 * s.tail() + i;
            }
            String id = "r" + next++;
            RecordingSink sink = new RecordingSink();
            try {
                handles.add(scheduler.submit(EngineRequest.of(id, tokens, s.maxTokens()), sink));
                sinks.put(id, sink);
            } catch (EngineOverloadedException | EngineUnavailableException e) {
                // A full queue is a legal answer; the request was never accepted.
            }
        }

        private void cancel(int pick) {
            if (!handles.isEmpty()) {
                handles.get(pick % handles.size()).cancel();
            }
        }
    }
}
