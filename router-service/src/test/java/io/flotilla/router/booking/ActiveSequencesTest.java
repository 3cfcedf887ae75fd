package io.flotilla.router.booking;

import io.flotilla.router.core.ActiveLoad;
import io.flotilla.protocol.v1.RouterSync;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class ActiveSequencesTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final Duration TTL = Duration.ofMinutes(10);

    private final ActiveSequences mine = new ActiveSequences("router-a", TTL, Duration.ofSeconds(30));
    private final ActiveSequences peer = new ActiveSequences("router-b", TTL, Duration.ofSeconds(30));

    @Test
    void aggregatedRequestCountsPrefillUntilPrefillDoneAndBlocksUntilFreed() {
        mine.add("r1", "w1", "", 1000, 80, new long[]{1, 2}, T0);
        mine.add("r2", "w1", "", 500, 40, new long[0], T0);
        assertThat(mine.load("w1")).isEqualTo(new ActiveLoad(1500, 2, 120, 2));

        mine.markPrefillDone("r1", T0.plusSeconds(1));
        assertThat(mine.load("w1")).isEqualTo(new ActiveLoad(500, 1, 120, 2));
        mine.markPrefillDone("r1", T0.plusSeconds(2)); // idempotent
        assertThat(mine.load("w1")).isEqualTo(new ActiveLoad(500, 1, 120, 2));

        mine.free("r1", T0.plusSeconds(3));
        mine.free("r2", T0.plusSeconds(3));
        mine.free("r2", T0.plusSeconds(3)); // unknown now: no effect
        assertThat(mine.load("w1")).isEqualTo(ActiveLoad.NONE);
        assertThat(mine.loads()).isEmpty();
        assertThat(mine.size()).isZero();
    }

    @Test
    void disaggregatedRequestCountsPrefillOnThePrefillWorkerAndBlocksOnTheDecodeWorker() {
        mine.add("r1", "d1", "p1", 3000, 200, new long[0], T0);
        assertThat(mine.load("p1")).isEqualTo(new ActiveLoad(3000, 1, 0, 0));
        assertThat(mine.load("d1")).isEqualTo(new ActiveLoad(0, 0, 200, 1));
        mine.markPrefillDone("r1", T0);
        assertThat(mine.load("p1")).isEqualTo(ActiveLoad.NONE);
        assertThat(mine.load("d1")).isEqualTo(new ActiveLoad(0, 0, 200, 1));
    }

    @Test
    void aLoadReportFreezesTheBaselineThatLaterBookingsAreCountedFrom() {
        mine.add("r1", "w1", "", 1000, 80, new long[0], T0);
        mine.reported("w1");
        mine.add("r2", "w1", "", 500, 40, new long[0], T0);
        assertThat(mine.loadsAtReport()).containsEntry("w1", new ActiveLoad(1000, 1, 80, 1));
        assertThat(mine.load("w1")).isEqualTo(new ActiveLoad(1500, 2, 120, 2));
        mine.free("r1", T0);
        mine.free("r2", T0);
        mine.reported("w1");
        assertThat(mine.loadsAtReport()).isEmpty();
    }

    @Test
    void reAddingAnIdMovesItsBooking() {
        mine.add("r1", "w1", "", 1000, 80, new long[0], T0);
        mine.add("r1", "w2", "", 1000, 80, new long[0], T0); // migrated after w1 failed
        assertThat(mine.load("w1")).isEqualTo(ActiveLoad.NONE);
        assertThat(mine.load("w2")).isEqualTo(new ActiveLoad(1000, 1, 80, 1));
    }

    @Test
    void forgottenRequestsExpireAfterTheTtlSinceTheirLastTouch() {
        mine.add("old", "w1", "", 100, 10, new long[0], T0);
        mine.add("touched", "w1", "", 100, 10, new long[0], T0);
        mine.add("young", "w1", "", 100, 10, new long[0], T0.plus(Duration.ofMinutes(5)));
        mine.markPrefillDone("touched", T0.plus(Duration.ofMinutes(6)));

        assertThat(mine.expire(T0.plus(TTL).minusMillis(1))).isZero();
        assertThat(mine.expire(T0.plus(TTL))).isEqualTo(1);
        assertThat(mine.contains("old")).isFalse();
        assertThat(mine.load("w1")).isEqualTo(new ActiveLoad(100, 1, 20, 2));

        assertThat(mine.expire(T0.plus(Duration.ofMinutes(15)))).isEqualTo(1); // young, added at +5
        assertThat(mine.expire(T0.plus(Duration.ofMinutes(16)))).isEqualTo(1); // touched at +6
        assertThat(mine.loads()).isEmpty();
    }

    @Test
    void peerChangesApplyAndOwnEchoesAreIgnored() {
        SequenceChange.Added add = mine.add("r1", "w1", "", 1000, 80, new long[]{7}, T0);
        assertThat(mine.apply(add, T0)).as("own echo").isFalse();
        assertThat(mine.load("w1")).isEqualTo(new ActiveLoad(1000, 1, 80, 1));

        assertThat(peer.apply(add, T0)).isTrue();
        assertThat(peer.apply(add, T0)).as("a duplicate replaces with the same booking").isTrue();
        assertThat(peer.loads()).isEqualTo(mine.loads());

        SequenceChange.PrefillDone done = mine.markPrefillDone("r1", T0);
        assertThat(mine.apply(done, T0)).isFalse();
        assertThat(peer.apply(done, T0)).isTrue();
        assertThat(peer.apply(done, T0)).isFalse();
        assertThat(peer.loads()).isEqualTo(mine.loads());

        // the gateway released through the peer replica: the peer frees and mine applies its change
        SequenceChange.Freed freed = peer.free("r1", T0.plusSeconds(1));
        assertThat(peer.apply(freed, T0)).isFalse();
        assertThat(mine.apply(freed, T0.plusSeconds(1))).isTrue();
        assertThat(mine.loads()).isEmpty();
        assertThat(peer.loads()).isEmpty();
    }

    @Test
    void aLateEchoOfAnEarlierRouteDoesNotUndoAMigration() {
        SequenceChange.Added first = mine.add("r1", "w1", "", 1000, 80, new long[0], T0);
        mine.add("r1", "w2", "", 1000, 80, new long[0], T0.plusSeconds(1)); // w1 failed: re-routed
        assertThat(mine.apply(first, T0.plusSeconds(2))).isFalse();
        assertThat(mine.load("w1")).isEqualTo(ActiveLoad.NONE);
        assertThat(mine.load("w2")).isEqualTo(new ActiveLoad(1000, 1, 80, 1));
    }

    @Test
    void anAddArrivingAfterItsFreeDoesNotResurrectTheRequestUntilTheTombstoneExpires() {
        ActiveSequences third = new ActiveSequences("router-c", TTL, Duration.ofSeconds(30));
        SequenceChange.Added add = mine.add("r1", "w1", "", 1000, 80, new long[0], T0);
        peer.apply(add, T0);
        SequenceChange.Freed freed = peer.free("r1", T0.plusSeconds(1));

        assertThat(third.apply(freed, T0.plusSeconds(1))).isFalse(); // unknown yet, but remembered
        assertThat(third.apply(add, T0.plusSeconds(2))).isFalse();
        assertThat(third.loads()).isEmpty();

        third.expire(T0.plusSeconds(31));
        assertThat(third.apply(add, T0.plusSeconds(32))).as("tombstone gone").isTrue();
    }

    @Test
    void changesSurviveTheWireForm() {
        SequenceChange.Added add = mine.add("r1", "d1", "p1", 3000, 200, new long[]{-1L, 42L}, T0);
        RouterSync wire = add.toProto();
        assertThat(wire.getRouterId()).isEqualTo("router-a");
        assertThat(wire.getAdd().getSeqHashesList()).containsExactly(-1L, 42L);
        SequenceChange back = SequenceChange.fromProto(wire).orElseThrow();
        assertThat(back).isInstanceOf(SequenceChange.Added.class);
        SequenceChange.Added a = (SequenceChange.Added) back;
        assertThat(a.routerId()).isEqualTo("router-a");
        assertThat(a.workerId()).isEqualTo("d1");
        assertThat(a.prefillWorkerId()).isEqualTo("p1");
        assertThat(a.newPrefillTokens()).isEqualTo(3000);
        assertThat(a.blocks()).isEqualTo(200);
        assertThat(a.seqHashes()).containsExactly(-1L, 42L);
        assertThat(a.tsMillis()).isEqualTo(T0.toEpochMilli());

        assertThat(SequenceChange.fromProto(mine.markPrefillDone("r1", T0).toProto()).orElseThrow())
                .isEqualTo(new SequenceChange.PrefillDone("router-a", "r1", T0.toEpochMilli()));
        assertThat(SequenceChange.fromProto(mine.free("r1", T0).toProto()).orElseThrow())
                .isEqualTo(new SequenceChange.Freed("router-a", "r1", T0.toEpochMilli()));
        assertThat(SequenceChange.fromProto(RouterSync.newBuilder().setRouterId("x").build())).isEmpty();
    }
}
