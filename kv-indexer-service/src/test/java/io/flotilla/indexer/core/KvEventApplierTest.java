package io.flotilla.indexer.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.function.Consumer;
import java.util.stream.Stream;

import static io.flotilla.indexer.core.KvInputs.cleared;
import static io.flotilla.indexer.core.KvInputs.removed;
import static io.flotilla.indexer.core.KvInputs.stored;
import static io.flotilla.indexer.core.KvInputs.xorOf;
import static io.flotilla.indexer.core.ReconcileRequest.Reason.DRIFT;
import static io.flotilla.indexer.core.ReconcileRequest.Reason.GAP;
import static io.flotilla.indexer.core.ReconcileRequest.Reason.RETRY;
import static io.flotilla.indexer.core.ReconcileRequest.Reason.REVIVED;
import static io.flotilla.indexer.core.ReconcileRequest.Reason.STALE_SNAPSHOT;
import static io.flotilla.indexer.core.Verdict.APPLIED;
import static io.flotilla.indexer.core.Verdict.BUFFERED;
import static io.flotilla.indexer.core.Verdict.DUPLICATE;
import static io.flotilla.indexer.core.Verdict.IGNORED;
import static io.flotilla.indexer.core.Verdict.STALE;
import static io.flotilla.indexer.core.WorkerState.EXPIRED;
import static io.flotilla.indexer.core.WorkerState.LIVE;
import static io.flotilla.indexer.core.WorkerState.UNVERIFIED;
import static org.assertj.core.api.Assertions.assertThat;

/** One row per event rule: a literal script of inputs with the expected verdict after each. */
class KvEventApplierTest {

    static final long E1 = 0xE1E1E1E1E1E1E1E1L;
    static final long E2 = 0x0000000000000E02L; // numerically smaller: epochs are not ordered by value
    static final ApplierSettings SETTINGS = new ApplierSettings(10_000, 3, 5_000, 60_000, 8);

    static Arguments rule(String name, Consumer<ApplierScript> script) {
        return Arguments.of(name, script);
    }

    static Stream<Arguments> rules() {
        return Stream.of(
                rule("batches in seq order are applied", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .batch(E1, 1, 0, stored(1, 2)).expect(APPLIED)
                        .batch(E1, 2, 0, stored(3), removed(1)).expect(APPLIED)
                        .holds(LIVE, E1, 2, 2, 3)),
                rule("seq <= cursor is a duplicate and changes nothing", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 2, 0, removed(1)).expect(APPLIED)
                        .batch(E1, 2, 0, removed(1)).expect(DUPLICATE)
                        .batch(E1, 1, 0, stored(1)).expect(DUPLICATE)
                        .holds(LIVE, E1, 2)),
                rule("cleared drops every block of the worker", s -> s
                        .batch(E1, 1, 0, stored(1, 2)).expect(APPLIED)
                        .batch(E1, 2, 0, cleared(), stored(3)).expect(APPLIED)
                        .holds(LIVE, E1, 2, 3)),
                rule("a gap marks the worker unverified, keeps its blocks served, asks for a snapshot", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 3, 0, stored(3)).expect(BUFFERED, GAP)
                        .batch(E1, 4, 0, stored(4)).expect(BUFFERED)
                        .batch(E1, 4, 0, stored(4)).expect(DUPLICATE)
                        .holds(UNVERIFIED, E1, 1, 1)),
                rule("a snapshot replaces the set, then buffered batches above its seq apply in order", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 3, 0, stored(3)).expect(BUFFERED, GAP)
                        .batch(E1, 5, 0, stored(5)).expect(BUFFERED)
                        .batch(E1, 4, 0, stored(4)).expect(BUFFERED)
                        .snapshot(E1, 3, 1, 2, 3).expect(APPLIED)
                        .holds(LIVE, E1, 5, 1, 2, 3, 4, 5)),
                rule("buffered batches at or below the snapshot seq are dropped", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 3, 0, stored(3)).expect(BUFFERED, GAP)
                        .snapshot(E1, 6, 7).expect(APPLIED)
                        .batch(E1, 6, 0, stored(6)).expect(DUPLICATE)
                        .holds(LIVE, E1, 6, 7)),
                rule("a snapshot that leaves a gap before the buffer asks again", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 5, 0, stored(5)).expect(BUFFERED, GAP)
                        .snapshot(E1, 3, 1, 3).expect(APPLIED, GAP)
                        .holds(UNVERIFIED, E1, 3, 1, 3)),
                rule("a snapshot older than the cursor is stale and asked for again", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 2, 0, stored(2)).expect(APPLIED)
                        .batch(E1, 4, 0, stored(4)).expect(BUFFERED, GAP)
                        .snapshot(E1, 1, 1).expect(STALE, STALE_SNAPSHOT)
                        .holds(UNVERIFIED, E1, 2, 1, 2)),
                rule("a full buffer drops its oldest batch", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 3, 0, stored(3)).expect(BUFFERED, GAP)
                        .batch(E1, 4, 0, stored(4)).expect(BUFFERED)
                        .batch(E1, 5, 0, stored(5)).expect(BUFFERED)
                        .batch(E1, 6, 0, stored(6)).expect(BUFFERED)
                        .snapshot(E1, 3, 1, 3).expect(APPLIED)
                        .holds(LIVE, E1, 6, 1, 3, 4, 5, 6)),
                rule("seq 1 of an unseen epoch starts it and drops the old epoch; late old batches are stale", s -> s
                        .batch(E1, 1, 100, stored(1, 2)).expect(APPLIED)
                        .batch(E2, 1, 50, stored(7)).expect(APPLIED)
                        .batch(E1, 2, 101, stored(3)).expect(STALE)
                        .holds(LIVE, E2, 1, 7)),
                rule("an unseen epoch mid-stream with an older ts is stale", s -> s
                        .batch(E1, 1, 100, stored(1)).expect(APPLIED)
                        .batch(E2, 5, 50, stored(9)).expect(STALE)
                        .holds(LIVE, E1, 1, 1)),
                rule("an unseen epoch mid-stream with a newer ts is adopted with a gap", s -> s
                        .batch(E1, 1, 100, stored(1)).expect(APPLIED)
                        .batch(E2, 3, 200, stored(9)).expect(BUFFERED, GAP)
                        .holds(UNVERIFIED, E2, 0)
                        .snapshot(E2, 3, 8, 9).expect(APPLIED)
                        .holds(LIVE, E2, 3, 8, 9)),
                rule("a status with a newer ts moves to its epoch; late statuses and batches of the old one are stale", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .batch(E1, 1, 1, stored(1)).expect(APPLIED)
                        .status(E2, 10, 1000).expect(APPLIED)
                        .holds(LIVE, E2, 0)
                        .status(E1, 20, 1000).expect(STALE)
                        .batch(E1, 2, 21, stored(2)).expect(STALE)
                        .batch(E2, 1, 11, stored(5)).expect(APPLIED)
                        .holds(LIVE, E2, 1, 5)),
                rule("a status of an unseen epoch with an older ts is stale", s -> s
                        .status(E1, 10, 1000).expect(APPLIED)
                        .status(E2, 5, 1000).expect(STALE)
                        .status(E1, 9, 1000).expect(STALE)
                        .holds(LIVE, E1, 0)),
                rule("a lease expires only strictly after its deadline; blocks and later batches go", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .at(1000).tick()
                        .holds(LIVE, E1, 1, 1)
                        .at(1001).tick()
                        .holds(EXPIRED, E1, 1)
                        .batch(E1, 2, 1001, stored(2)).expect(STALE)
                        .holds(EXPIRED, E1, 1)),
                rule("batches never extend a lease", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .at(900).batch(E1, 1, 900, stored(1)).expect(APPLIED)
                        .at(1001).batch(E1, 2, 1001, stored(2)).expect(STALE)
                        .holds(EXPIRED, E1, 1)),
                rule("STOPPED drops the worker at once and retires its epoch", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .stopped(E1, 5).expect(APPLIED)
                        .holds(EXPIRED, E1, 1)
                        .batch(E1, 2, 6, stored(2)).expect(STALE)
                        .status(E1, 7, 1000).expect(STALE)
                        .batch(E2, 1, 8, stored(3)).expect(APPLIED)
                        .holds(LIVE, E2, 1, 3)),
                rule("leases freeze while the membership feed is unhealthy and shift by the outage", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .feedDown(500)
                        .at(5000).tick()
                        .batch(E1, 2, 5000, stored(2)).expect(APPLIED)
                        .holds(LIVE, E1, 2, 1, 2)
                        .at(6000).feedUp()
                        .at(6500).tick()
                        .holds(LIVE, E1, 2, 1, 2)
                        .at(6501).tick()
                        .holds(EXPIRED, E1, 2)),
                rule("a fresh heartbeat after expiry revives the worker unverified", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .at(1500).tick()
                        .holds(EXPIRED, E1, 1)
                        .batch(E1, 2, 1450, stored(2)).expect(STALE)
                        .status(E1, 1400, 1000).expect(APPLIED, REVIVED)
                        .batch(E1, 3, 1500, stored(3)).expect(BUFFERED)
                        .snapshot(E1, 2, 1, 2).expect(APPLIED)
                        .holds(LIVE, E1, 3, 1, 2, 3)),
                rule("a heartbeat received after expiry revives, whatever its ts: the lease is on the receive clock", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .at(3000).tick()
                        .holds(EXPIRED, E1, 0)
                        .status(E1, 1500, 1000).expect(APPLIED, REVIVED)
                        .at(3999).tick()
                        .holds(UNVERIFIED, E1, 0)),
                rule("a worker clock 10 s behind keeps its lease: deadlines count from receipt", s -> s
                        .at(50_000).status(E1, 40_000, 1000).expect(APPLIED)
                        .batch(E1, 1, 40_100, stored(1)).expect(APPLIED)
                        .at(50_900).status(E1, 40_900, 1000).expect(APPLIED)
                        .at(51_800).tick()
                        .holds(LIVE, E1, 1, 1)
                        .at(51_901).tick()
                        .holds(EXPIRED, E1, 1)),
                rule("a worker clock 10 s ahead is still expired one lease after its last heartbeat arrived", s -> s
                        .at(50_000).status(E1, 60_000, 1000).expect(APPLIED)
                        .batch(E1, 1, 60_100, stored(1)).expect(APPLIED)
                        .at(51_000).tick()
                        .holds(LIVE, E1, 1, 1)
                        .at(51_001).tick()
                        .holds(EXPIRED, E1, 1)),
                rule("a digest that disagrees at the cursor is drift; at another seq it is ignored", s -> s
                        .batch(E1, 1, 0, stored(1, 2)).expect(APPLIED)
                        .load(E1, 2, xorOf(1, 2), 1).expect(APPLIED)
                        .load(E1, 2, xorOf(1, 3), 0).expect(IGNORED)
                        .load(E2, 1, 1, 1).expect(IGNORED)
                        .load(E1, 2, xorOf(1, 3), 1).expect(APPLIED, DRIFT)
                        .holds(UNVERIFIED, E1, 1, 1, 2)
                        .snapshot(E1, 1, 1, 3).expect(APPLIED)
                        .load(E1, 2, xorOf(1, 3), 1).expect(APPLIED)
                        .holds(LIVE, E1, 1, 1, 3)),
                rule("a worker known only from batches has a provisional lease from the batch's receipt", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .at(10_000).tick()
                        .holds(LIVE, E1, 1, 1)
                        .at(10_001).tick()
                        .holds(EXPIRED, E1, 1)),
                rule("a batch's worker ts does not age its provisional lease (it may come from a skewed clock)", s -> s
                        .at(20_000).batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .at(30_000).tick()
                        .holds(LIVE, E1, 1, 1)
                        .at(30_001).tick()
                        .holds(EXPIRED, E1, 1)),
                rule("an unanswered reconciliation is asked for again", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 3, 0, stored(3)).expect(BUFFERED, GAP)
                        .at(4_999).tick().expect(IGNORED)
                        .at(5_000).tick().expect(APPLIED, RETRY)),
                rule("a snapshot from an unseen epoch comes from the live process and is adopted", s -> s
                        .batch(E1, 1, 0, stored(1)).expect(APPLIED)
                        .batch(E1, 3, 0, stored(3)).expect(BUFFERED, GAP)
                        .snapshot(E2, 4, 9).expect(APPLIED)
                        .holds(LIVE, E2, 4, 9)
                        .snapshot(E1, 9, 1).expect(STALE)),
                rule("a snapshot never revives an expired worker", s -> s
                        .status(E1, 0, 1000).expect(APPLIED)
                        .at(2000).tick()
                        .snapshot(E1, 1, 1).expect(STALE)
                        .holds(EXPIRED, E1, 0)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void followsRule(String name, Consumer<ApplierScript> script) {
        script.accept(new ApplierScript(SETTINGS));
    }

    @Test
    void countersAddUp() {
        ApplierScript s = new ApplierScript(SETTINGS)
                .status(E1, 0, 1000)
                .batch(E1, 1, 0, stored(1, 2), removed(2))
                .batch(E1, 1, 0, stored(1))
                .batch(E1, 3, 0, stored(3))
                .snapshot(E1, 2, 1)
                .batch(E2, 1, 1, cleared())
                .batch(E1, 4, 2, stored(4))
                .load(E2, 5, 5, 1);
        ApplierStats st = s.stats();
        assertThat(st.batchesApplied()).isEqualTo(3);          // E1#1, E1#3 from the buffer, E2#1
        assertThat(st.eventsApplied()).isEqualTo(4);
        assertThat(st.blockEventsApplied()).isEqualTo(3 + 1 + 1);
        assertThat(st.duplicates()).isEqualTo(1);
        assertThat(st.gaps()).isEqualTo(1);
        assertThat(st.staleBatches()).isEqualTo(1);
        assertThat(st.reconciliationsRequested()).isEqualTo(2); // gap + drift
        assertThat(st.reconciliationsApplied()).isEqualTo(1);
        assertThat(st.driftDetected()).isEqualTo(1);
        assertThat(st.epochChanges()).isEqualTo(1);
    }

    @Test
    void expiredWorkersAreForgottenAfterRetention() {
        ApplierScript s = new ApplierScript(SETTINGS).status(E1, 0, 1000).at(1001).tick();
        assertThat(s.applier.worker(ApplierScript.W)).isPresent();
        s.at(1001 + 60_000).tick();
        assertThat(s.applier.worker(ApplierScript.W)).isPresent();
        s.at(1002 + 60_000).tick();
        assertThat(s.applier.worker(ApplierScript.W)).isEmpty();
    }

    @Test
    void matchesReflectEveryWorker() {
        KvEventApplier a = new KvEventApplier(new PrefixIndex(), SETTINGS);
        a.onBatch(KvInputs.batch("a", E1, 1, 0, stored(1, 2, 3)), 0);
        a.onBatch(KvInputs.batch("b", E2, 1, 0, stored(1, 2)), 0);
        assertThat(a.index().findMatches(new long[]{1, 2, 3}))
                .containsExactlyInAnyOrder(new WorkerMatch("a", 3), new WorkerMatch("b", 2));
        assertThat(a.lastAppliedAtMs()).isZero();
    }
}
