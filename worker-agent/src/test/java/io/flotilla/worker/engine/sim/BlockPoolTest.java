package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BlockPoolTest {

    private final KvEventReplay replay = new KvEventReplay();

    private void flush(BlockPool pool) {
        List<KvEvent> events = pool.drainEvents();
        if (!events.isEmpty()) {
            replay.onEvents(replay.position + 1, events);
        }
    }

    /** Allocates and registers a chain of blocks with seq hashes 1..n (local hash = 100 + seq hash). */
    private int[] storeChain(BlockPool pool, int n) {
        int[] slots = new int[n];
        for (int i = 0; i < n; i++) {
            slots[i] = pool.register(pool.allocate(), i, i + 1, 100 + i + 1);
        }
        return slots;
    }

    @Test
    void storedChainIsOneEventInPrefixOrderWithParents() {
        BlockPool pool = new BlockPool(4, null);
        storeChain(pool, 3);
        List<KvEvent> events = pool.drainEvents();

        assertThat(events).hasSize(1);
        assertThat(events.get(0).getStored().getParentSeqHash()).isZero();
        assertThat(events.get(0).getStored().getBlocksList())
                .extracting(b -> b.getSeqHash(), b -> b.getLocalHash())
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1L, 101L),
                        org.assertj.core.groups.Tuple.tuple(2L, 102L),
                        org.assertj.core.groups.Tuple.tuple(3L, 103L));
        assertThat(pool.activeBlocks()).isEqualTo(3);
        assertThat(pool.freeBlocks()).isEqualTo(1);
        pool.verifyInvariants();
    }

    @Test
    void evictionRemovesLeastRecentlyReleasedFirst() {
        BlockPool pool = new BlockPool(4, null);
        int[] slots = storeChain(pool, 4);
        for (int slot : new int[] {slots[2], slots[0], slots[3], slots[1]}) {
            pool.release(slot); // LRU order now: 3, 1, 4, 2
        }
        flush(pool);
        assertThat(pool.cachedBlocks()).isEqualTo(4);

        pool.allocate();
        pool.allocate();
        pool.allocate();
        flush(pool);

        assertThat(replay.removedInOrder()).containsExactly(3L, 1L, 4L);
        assertThat(replay.resident).containsExactly(2L);
        assertThat(KvEventReplay.asSet(pool.residentSeqHashes())).isEqualTo(replay.resident);
        assertThat(replay.violations).isEmpty();
        pool.verifyInvariants();
    }

    @Test
    void retainingACachedBlockProtectsItFromEviction() {
        BlockPool pool = new BlockPool(3, null);
        int[] slots = storeChain(pool, 3);
        pool.release(slots[0]);
        pool.release(slots[1]);
        pool.release(slots[2]);
        pool.retain(slots[0]);

        pool.allocate();
        pool.allocate();

        assertThat(pool.allocate()).isEqualTo(-1);
        assertThat(pool.lookup(1)).isEqualTo(slots[0]);
        assertThat(pool.refCount(slots[0])).isEqualTo(1);
        pool.verifyInvariants();
    }

    @Test
    void registeringAResidentHashSharesTheExistingBlock() {
        BlockPool pool = new BlockPool(4, null);
        int first = pool.register(pool.allocate(), 0, 7, 7);
        int second = pool.allocate();
        pool.drainEvents();

        int held = pool.register(second, 0, 7, 7);

        assertThat(held).isEqualTo(first);
        assertThat(pool.refCount(first)).isEqualTo(2);
        assertThat(pool.refCount(second)).isZero();
        assertThat(pool.isRegistered(second)).isFalse();
        assertThat(pool.drainEvents()).isEmpty();
        pool.verifyInvariants();
    }

    @Test
    void clearingWhileBlocksAreReferencedEmitsRemovedForTheCachedOnes() {
        BlockPool pool = new BlockPool(4, null);
        int[] slots = storeChain(pool, 3);
        pool.release(slots[2]);
        pool.release(slots[1]);
        flush(pool);

        assertThat(pool.clearCached()).isEqualTo(2);
        List<KvEvent> events = pool.drainEvents();

        assertThat(events).singleElement().satisfies(e ->
                assertThat(e.getRemoved().getSeqHashesList()).containsExactly(3L, 2L));
        assertThat(pool.residentSeqHashes()).containsExactly(1L);
        pool.verifyInvariants();
    }

    @Test
    void clearingEverythingEmitsAllBlocksCleared() {
        BlockPool pool = new BlockPool(4, null);
        for (int slot : storeChain(pool, 2)) {
            pool.release(slot);
        }
        pool.drainEvents();

        assertThat(pool.clearCached()).isEqualTo(2);

        assertThat(pool.drainEvents()).singleElement().satisfies(e -> assertThat(e.hasCleared()).isTrue());
        assertThat(pool.freeBlocks()).isEqualTo(4);
        assertThat(pool.clearCached()).isZero();
        assertThat(pool.drainEvents()).isEmpty();
        pool.verifyInvariants();
    }

    @Test
    void partialBlocksReturnToTheFreeListWithoutEvents() {
        BlockPool pool = new BlockPool(2, null);
        int slot = pool.allocate();
        pool.release(slot);
        assertThat(pool.freeBlocks()).isEqualTo(2);
        assertThat(pool.drainEvents()).isEmpty();
        assertThatThrownBy(() -> pool.release(slot)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> pool.retain(slot)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void registeredBlocksCarryTheirPattern() {
        KvPayloadStore store = new KvPayloadStore(4, 256, "bf16/bs16/paged");
        BlockPool pool = new BlockPool(4, store);
        int slot = pool.register(pool.allocate(), 0, 0xABCDEFL, 1);

        assertThat(store.firstMismatch(slot, 0xABCDEFL)).isEqualTo(-1);
        assertThat(store.firstMismatch(slot, 0xABCDEEL)).isEqualTo(0);
    }
}
