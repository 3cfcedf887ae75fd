package io.flotilla.router.booking;

import io.flotilla.router.core.RouterDefaults;
import io.flotilla.router.core.ActiveLoad;
import io.flotilla.router.core.Capacity;
import io.flotilla.router.core.ClusterSnapshot;
import io.flotilla.router.core.Decision;
import io.flotilla.router.core.OverlapSource;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.RoutingPolicy;
import io.flotilla.router.core.RoutingRequest;
import io.flotilla.router.core.Signal;
import io.flotilla.router.core.WorkerView;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;

import io.flotilla.router.core.Fixtures;

import static io.flotilla.router.core.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

class BookingLedgerTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final EnumSet<Signal> ALL = EnumSet.allOf(Signal.class);

    private final BookingLedger ledger = BookingLedger.create("router-a", RouterDefaults.config());
    private final RoutingPolicy policy = new RoutingPolicy(RouterDefaults.config(), new Random(1));
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
        BookingLedger peer = BookingLedger.create("router-b", RouterDefaults.config());
        RoutingRequest r = Fixtures.request("r", 256);
        Decision d = policy.decide(r, peer.snapshot(workers, r, ALL, null, T0));
        SequenceChange.Added change = peer.book(r, d, T0).orElseThrow();

        assertThat(ledger.applyRemote(change, T0)).isTrue();
        assertThat(ledger.sequences().load(d.workerId())).isEqualTo(new ActiveLoad(256, 1, 16, 1));
        assertThat(ledger.approx().overlaps(r.seqHashes(), T0)).isEqualTo(Map.of(d.workerId(), 16));
        assertThat(peer.applyRemote(change, T0)).isFalse();
        assertThat(peer.sequences().size()).isEqualTo(1);
    }

    /**
     * Replica A books a request and dies without its Release. On B the booking counts until the
     * worker's next load report (which cannot contain a request the worker never saw: DELTA takes only
     * bookings made since the report), and is forgotten after the sequence TTL; re-routing the same id
     * on B moves it instead of counting it twice.
     */
    @Test
    void aDeadReplicasBookingsStopCountingAtTheNextReportAndExpireByTtl() {
        BookingLedger a = BookingLedger.create("router-a", RouterDefaults.config());
        BookingLedger b = BookingLedger.create("router-b", RouterDefaults.config());
        RoutingRequest r = Fixtures.request("r", 1600);
        SequenceChange.Added onA = a.book(r, policy.decide(r, a.snapshot(workers, r, ALL, null, T0)), T0).orElseThrow();
        b.applyRemote(onA, T0);
        String w = onA.workerId();
        assertThat(capacityOf(b, w).activeBlocks()).isEqualTo(100);

        b.loadReported(w); // the worker reports (idle: the request never reached it)
        assertThat(capacityOf(b, w).activeBlocks()).as("report + bookings since the report").isZero();
        assertThat(b.sequences().size()).as("still remembered until the TTL").isEqualTo(1);

        RoutingRequest again = new RoutingRequest("r", r.model(), r.islTokens(), r.blockSize(), r.seqHashes(), java.util.Set.of(w),
                false, 0);
        Decision moved = policy.decide(again, b.snapshot(workers, again, ALL, null, T0.plusSeconds(1)));
        b.book(again, moved, T0.plusSeconds(1));
        assertThat(moved.workerId()).isNotEqualTo(w);
        assertThat(b.sequences().size()).as("one booking per request id").isEqualTo(1);
        assertThat(b.sequences().load(w)).isEqualTo(ActiveLoad.NONE);

        b.expire(T0.plusSeconds(1).plus(RouterDefaults.config().sequenceTtl()));
        assertThat(b.sequences().size()).isZero();
        assertThat(b.sequences().loads()).isEmpty();
    }

    private Capacity.Headroom capacityOf(BookingLedger ledger, String workerId) {
        return policy.capacity(ledger.loadSnapshot(workers)).get(0).workers().stream()
                .filter(h -> h.worker().id().equals(workerId)).findFirst().orElseThrow();
    }
}
