package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.KvEvent;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A literal script against one applier and one worker id "w": each input runs at the script's clock
 * and the next {@code expect}/{@code reconcile} checks that input's outcome.
 */
final class ApplierScript {

    static final String W = "w";

    final KvEventApplier applier;
    private long now;
    private Outcome last;
    private final List<String> log = new ArrayList<>();

    ApplierScript(ApplierSettings settings) {
        this.applier = new KvEventApplier(new PrefixIndex(16), settings);
    }

    ApplierScript at(long nowMs) {
        now = nowMs;
        return this;
    }

    ApplierScript batch(long epoch, long seq, long ts, KvEvent... events) {
        return record("batch e" + epoch + " seq " + seq, applier.onBatch(KvInputs.batch(W, epoch, seq, ts, events), now));
    }

    ApplierScript status(long epoch, long ts, int leaseMs) {
        return record("status e" + epoch + " ts " + ts, applier.onStatus(KvInputs.ready(W, epoch, ts, leaseMs), now));
    }

    ApplierScript stopped(long epoch, long ts) {
        return record("stopped e" + epoch, applier.onStatus(KvInputs.stopped(W, epoch, ts), now));
    }

    ApplierScript load(long epoch, long count, long xor, long kvSeq) {
        return record("load kvSeq " + kvSeq, applier.onLoad(KvInputs.load(W, epoch, count, xor, kvSeq), now));
    }

    ApplierScript snapshot(long epoch, long seq, long... hashes) {
        return record("snapshot e" + epoch + " seq " + seq, applier.onSnapshot(KvInputs.snapshot(W, epoch, seq, hashes), now));
    }

    ApplierScript tick() {
        KvEventApplier.TickResult t = applier.tick(now);
        Outcome o = t.reconcile().isEmpty() ? Outcome.IGNORED : Outcome.of(Verdict.APPLIED, t.reconcile().get(0));
        return record("tick at " + now + " expired " + t.expired(), o);
    }

    ApplierScript feedDown(long sinceMs) {
        applier.membershipFeedUnhealthy(sinceMs);
        return this;
    }

    ApplierScript feedUp() {
        applier.membershipFeedHealthy(now);
        return this;
    }

    ApplierScript expect(Verdict verdict) {
        assertThat(last.verdict()).as(describe()).isEqualTo(verdict);
        assertThat(last.reconcile()).as(describe()).isEmpty();
        return this;
    }

    ApplierScript expect(Verdict verdict, ReconcileRequest.Reason reason) {
        assertThat(last.verdict()).as(describe()).isEqualTo(verdict);
        assertThat(last.reconcile()).as(describe()).hasValueSatisfying(r -> {
            assertThat(r.reason()).isEqualTo(reason);
            assertThat(r.workerId()).isEqualTo(W);
        });
        return this;
    }

    /** The worker's state, epoch, cursor and exact block set. */
    ApplierScript holds(WorkerState state, long epoch, long lastSeq, long... blocks) {
        WorkerView v = applier.worker(W).orElseThrow();
        assertThat(v.state()).as(describe()).isEqualTo(state);
        assertThat(v.epoch()).as(describe()).isEqualTo(epoch);
        assertThat(v.lastSeq()).as(describe()).isEqualTo(lastSeq);
        assertThat(applier.index().blocksOf(W)).as(describe()).containsExactlyInAnyOrder(blocks);
        assertThat(v.blocks()).isEqualTo(blocks.length);
        return this;
    }

    ApplierStats stats() {
        return applier.stats();
    }

    private ApplierScript record(String what, Outcome outcome) {
        log.add(what + " -> " + outcome);
        last = outcome;
        return this;
    }

    private String describe() {
        return String.join("\n", log);
    }
}
