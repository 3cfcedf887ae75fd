package io.flotilla.indexer.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class WorkerSlotsTest {

    @Test
    void assignsLowestFreeSlotAndIsIdempotent() {
        WorkerSlots slots = new WorkerSlots();
        assertThat(slots.acquire("a")).isZero();
        assertThat(slots.acquire("b")).isEqualTo(1);
        assertThat(slots.acquire("a")).isZero();
        slots.release(0);
        assertThat(slots.slotOf("a")).isEqualTo(-1);
        assertThat(slots.acquire("c")).isZero();
        assertThat(slots.size()).isEqualTo(2);
    }

    @Test
    void reuseOfASlotChangesItsToken() {
        WorkerSlots slots = new WorkerSlots();
        int s = slots.acquire("a");
        WorkerSlots.View before = slots.view();
        slots.release(s);
        slots.acquire("b");
        WorkerSlots.View after = slots.view();
        assertThat(after.names()[s]).isEqualTo("b");
        assertThat(before.sameAssignment(s, after)).isFalse();
        assertThat(after.sameAssignment(s, slots.view())).isTrue();
    }

    @Test
    void occupancyTracksGroupsOf64() {
        WorkerSlots slots = new WorkerSlots();
        for (int i = 0; i < 130; i++) {
            slots.acquire("w" + i);
        }
        WorkerSlots.View v = slots.view();
        assertThat(v.groups()).isEqualTo(3);
        assertThat(v.occupancy()[0]).isEqualTo(-1L);
        assertThat(v.occupancy()[1]).isEqualTo(-1L);
        assertThat(v.occupancy()[2]).isEqualTo(0b11L);
        slots.release(64, 129, -1);
        assertThat(slots.view().occupancy()[1]).isEqualTo(-2L);
        assertThat(slots.view().occupancy()[2]).isEqualTo(0b01L);
    }
}
