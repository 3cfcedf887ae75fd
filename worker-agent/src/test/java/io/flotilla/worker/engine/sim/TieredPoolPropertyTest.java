package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvTier;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.kvbm.ManualTierIo;
import io.flotilla.worker.kvbm.TierSettings;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeded simulation of a contended engine with host-memory and disk tiers whose copies run at arbitrary
 * points between steps. After every operation:
 * <ul>
 *   <li>"replaying the KV events gives exactly the engine's blocks in every tier, at the snapshot's position";</li>
 *   <li>"every block resident on the device holds exactly its bytes" (onboarded, imported or computed: never wrong KV);</li>
 *   <li>"pool and tier counts and indexes are consistent; a slot held for a copy is never evicted";</li>
 *   <li>"every accepted request ends with exactly one terminal callback".</li>
 * </ul>
 */
class TieredPoolPropertyTest {

    sealed interface Op permits Submit, Step, Copies, Cancel, Clear {
    }

    record Submit(int family, int length) implements Op {
    }

    record Step(int count) implements Op {
    }

    record Copies(int count) implements Op {
    }

    record Cancel(int pick) implements Op {
    }

    record Clear() implements Op {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> submit = Combinators.combine(Arbitraries.integers().between(0, 5),
                Arbitraries.integers().between(21, 40)).as(Submit::new);
        Arbitrary<Op> step = Arbitraries.integers().between(1, 5).map(Step::new);
        Arbitrary<Op> copies = Arbitraries.integers().between(1, 4).map(Copies::new);
        Arbitrary<Op> cancel = Arbitraries.integers().between(0, 20).map(Cancel::new);
        return Arbitraries.frequencyOf(Tuple.of(5, submit), Tuple.of(6, step), Tuple.of(4, copies), Tuple.of(1, cancel),
                Tuple.of(1, Arbitraries.just(new Clear()))).list().ofMinSize(30).ofMaxSize(90);
    }

    @Property(seed = "606060", tries = 150)
    void tiersStayConsistentWithTheirEventsAndNeverHoldWrongKv(@ForAll("ops") List<Op> ops) throws IOException {
        Path dir = Files.createTempDirectory("tiered-pool");
        ManualTierIo io = new ManualTierIo();
        KvEventReplay replay = new KvEventReplay();
        SimEngineConfig config = SimTesting.small().totalBlocks(12).maxRunning(3).maxBatchTokens(12).kvBytesPerBlock(64)
                .maxContextTokens(64).tiers(TierSettings.of(8 * 64, dir, 16 * (64 + 64))).build();
        Scheduler s = new Scheduler(config, replay, io);
        List<RequestHandle> handles = new ArrayList<>();
        List<RecordingSink> sinks = new ArrayList<>();
        long[] now = {0};
        try {
            int n = 0;
            for (Op op : ops) {
                if (op instanceof Submit sub) {
                    int[] prompt = SimTesting.concat(SimTesting.prompt(20, sub.family()),
                            SimTesting.prompt(Math.max(1, sub.length() - 20), 10 + n % 80));
                    RecordingSink sink = new RecordingSink();
                    try {
                        handles.add(s.submit(SimTesting.request("r" + n++, prompt, 2), sink));
                        sinks.add(sink);
                    } catch (EngineOverloadedException full) {
                        // the waiting queue is full: nothing was accepted
                    }
                } else if (op instanceof Step st) {
                    for (int i = 0; i < st.count(); i++) {
                        StepPlan plan = s.schedule(now[0]);
                        now[0] += (long) Math.ceil(Math.max(1, plan.stepMs()));
                        s.complete(plan);
                    }
                } else if (op instanceof Copies c) {
                    for (int i = 0; i < c.count(); i++) {
                        io.runOne();
                    }
                } else if (op instanceof Cancel c) {
                    if (!handles.isEmpty()) {
                        handles.get(c.pick() % handles.size()).cancel();
                    }
                } else {
                    s.clearCache();
                }
                check(s, replay);
            }
            for (int i = 0; i < 2000 && !(s.isIdle() && io.queued() == 0); i++) {
                io.runAll();
                StepPlan plan = s.schedule(now[0]);
                now[0] += (long) Math.ceil(Math.max(1, plan.stepMs()));
                s.complete(plan);
            }
            io.runAll();
            check(s, replay);
            assertThat(s.isIdle()).as("drains").isTrue();
            assertThat(sinks).allSatisfy(k -> assertThat(k.finishReason != null || k.error != null)
                    .as("one terminal callback").isTrue());
            assertThat(s.pool().activeBlocks()).isZero();
            // the scripts must exercise onboarding from both tiers, or the checks would prove little
            boolean host = s.tiers().stats(KvTier.KV_TIER_HOST).onboardedBlocks() > 0;
            boolean disk = s.tiers().stats(KvTier.KV_TIER_DISK).onboardedBlocks() > 0;
            net.jqwik.api.statistics.Statistics.label("onboarded from host").collect(host);
            net.jqwik.api.statistics.Statistics.label("onboarded from host").coverage(c -> c.check(true).percentage(p -> p >= 50));
            net.jqwik.api.statistics.Statistics.label("onboarded from disk").collect(disk);
            net.jqwik.api.statistics.Statistics.label("onboarded from disk").coverage(c -> c.check(true).percentage(p -> p >= 50));
        } finally {
            s.closeTiers();
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void check(Scheduler s, KvEventReplay replay) {
        assertThat(replay.violations).isEmpty();
        var r = s.residentBlocks();
        assertThat(r.position()).isEqualTo(replay.position);
        assertThat(KvEventReplay.asSet(r.seqHashes())).isEqualTo(replay.resident);
        assertThat(KvEventReplay.asSet(r.hostSeqHashes())).isEqualTo(replay.host);
        assertThat(KvEventReplay.asSet(r.diskSeqHashes())).isEqualTo(replay.disk);
        s.pool().verifyInvariants();
        s.tiers().verifyInvariants();
        BlockPool pool = s.pool();
        for (int slot = 0; slot < pool.totalBlocks(); slot++) {
            if (pool.isRegistered(slot)) {
                assertThat(pool.payloads().firstMismatch(slot, pool.seqHashOf(slot))).as("bytes of slot %d", slot).isNegative();
            }
        }
        var d = s.kvDigest();
        assertThat(d.hostCount()).isEqualTo(replay.host.size());
        assertThat(d.diskXor()).isEqualTo(replay.disk.stream().mapToLong(Long::longValue).reduce(0, (a, b) -> a ^ b));
    }
}
