package io.flotilla.worker.kvbm;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of the host-memory tier: off-heap direct buffers of up to {@link #SLAB_BYTES} each,
 * allocated the first time one of their slots is written, so a tier that never fills never commits
 * its whole size. Used by the tier thread only ({@link #allocatedBytes()} excepted).
 */
final class HostMemory {

    /** Slab size: large enough that slabs stay few, small enough that the first use costs little. */
    static final int SLAB_BYTES = 64 << 20;

    private final int bytesPerBlock;
    private final int slots;
    private final int slotsPerSlab;
    private final ByteBuffer[] slabs;
    private final AtomicLong allocated = new AtomicLong();

    HostMemory(int slots, int bytesPerBlock) {
        this.slots = slots;
        this.bytesPerBlock = bytesPerBlock;
        this.slotsPerSlab = Math.max(1, Math.min(slots, SLAB_BYTES / bytesPerBlock));
        this.slabs = new ByteBuffer[(slots + slotsPerSlab - 1) / slotsPerSlab];
    }

    /** A view of {@code slot}'s bytes (position 0, limit bytesPerBlock), allocating its slab if needed. */
    ByteBuffer view(int slot) {
        if (slot < 0 || slot >= slots) {
            throw new IndexOutOfBoundsException("host slot " + slot);
        }
        int s = slot / slotsPerSlab;
        ByteBuffer slab = slabs[s];
        if (slab == null) {
            int bytes = Math.min(slotsPerSlab, slots - s * slotsPerSlab) * bytesPerBlock;
            slab = ByteBuffer.allocateDirect(bytes);
            slabs[s] = slab;
            allocated.addAndGet(bytes);
        }
        return slab.slice((slot % slotsPerSlab) * bytesPerBlock, bytesPerBlock);
    }

    /** Copies {@code src} (exactly one block, from its position) into {@code slot}. */
    void write(int slot, ByteBuffer src) {
        view(slot).put(src.duplicate());
    }

    long allocatedBytes() {
        return allocated.get();
    }

    /** Drops the slabs (their memory is returned when collected). */
    void release() {
        java.util.Arrays.fill(slabs, null);
    }
}
