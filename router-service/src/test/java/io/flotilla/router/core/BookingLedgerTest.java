package io.flotilla.router.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.flotilla.router.core.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

class BookingLedgerTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final EnumSet<Signal> ALL = EnumSet.allOf(Signal.class);

    private final BookingLedger ledger = BookingLedger.create("router-a", RouterConfig.defaults());
    private final RoutingPolicy policy = new RoutingPolicy(RouterConfig.defaults(), new Random(1));
    private final List<WorkerView> workers = List.of(worker("w1"), worker("w2"));

    @Test
    void theSnapshotSaysWhereOverlapCameFrom() {
        RoutingRequest r = Fixtures.request("r", 256);
        assertThat(ledger.snapshot(workers, r, ALL, Map.of("w1", 3), T0).source()).isEqualTo(OverlapSource.INDEXER);
        assertThat(ledger.snapshot(workers, r, ALL, null, T0).source()).isEqualTo(OverlapSource.APPROX);
        assertThat(ledger.snapshot(workers, r, EnumSet.of(Signal.LOAD), Map.of("w1", 3), T0).source())
                .isEqualTo(OverlapSource.NONE);
    }

    @Test
    void bookingARoutedDecisionLoadsTheWorkerAndTeachesTheApproximateIndex() {
        RoutingRequest r = Fixtures.request("r", 256);
        Decision d = policy.decide(r, ledger.snapshot(workers, r, ALL, null, T0));
        SequenceChange.Added change = ledger.book(r, d, T0).orElseThrow();
        assertThat(change.workerId()).isEqualTo(d.workerId());
        assertThat(ledger.sequences().load(d.workerId())).isEqualTo(new ActiveLoad(256, 1, 16, 1));

        ClusterSnapshot next = ledger.snapshot(workers, r, ALL, null, T0.plusSeconds(1));
        assertThat(next.overlapOf(d.workerId())).isEqualTo(16);
        assertThat(next.activeLoadOf(d.workerId())).isEqualTo(new ActiveLoad(256, 1, 16, 1));

        ledger.prefillDone("r", T0.plusSeconds(1));
        ledger.release("r", T0.plusSeconds(2));
        assertThat(ledger.sequences().loads()).isEmpty();
    }

    @Test
    void refusedDecisionsBookNothing() {
        RoutingRequest r = Fixtures.request("r", 256);
        Decision none = policy.decide(r, ledger.snapshot(List.of(), r, ALL, null, T0));
        assertThat(ledger.book(r, none, T0)).isEmpty();
        assertThat(ledger.sequences().size()).isZero();
    }

    @Test
    void aPeersBookingsLoadWorkersAndTeachTheApproximateIndexButEchoesDoNot() {
        BookingLedger peer = BookingLedger.create("router-b", RouterConfig.defaults());
        RoutingRequest r = Fixtures.request("r", 256);
        Decision d = policy.decide(r, peer.snapshot(workers, r, ALL, null, T0));
        SequenceChange.Added change = peer.book(r, d, T0).orElseThrow();

        assertThat(ledger.applyRemote(change, T0)).isTrue();
        assertThat(ledger.sequences().load(d.workerId())).isEqualTo(new ActiveLoad(256, 1, 16, 1));
        assertThat(ledger.approx().overlaps(r.seqHashes(), T0)).isEqualTo(Map.of(d.workerId(), 16));
        assertThat(peer.applyRemote(change, T0)).isFalse();
        assertThat(peer.sequences().size()).isEqualTo(1);
    }
}
