package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.KvBlockRef;
import io.flotilla.worker.engine.KvMemory;

import java.nio.ByteBuffer;

/**
 * The simulated KV bytes of every block slot, held off-heap in a few large direct buffers (slabs
 * of about 4 MiB), never one object per block. A slab is allocated the first time one of its
 * slots is touched, so an engine that never fills its pool never pays for all of it; a full one
 * holds {@code totalBlocks × bytesPerBlock} bytes of direct memory (128 MiB by default).
 *
 * <p>Not thread-safe: the engine guards it with its lock. A slot's bytes are meaningful only while
 * the pool says the slot holds a registered block; a reader must keep the block referenced (a
 * transfer lease pins it) for as long as it reads. Slab i is region i of {@link KvBlockRef}s; with
 * {@link #useMemory} the slabs come from a transfer agent's registered memory, and after
 * {@link #close()} no slab is touched again (that memory may be unmapped).
 */
public final class KvPayloadStore {

    static final int TARGET_SLAB_BYTES = 4 << 20;

    private final int totalBlocks;
    private final int bytesPerBlock;
    private final int blocksPerSlab;
    private final long layoutSeed;
    private final ByteBuffer[] slabs;
    private KvMemory memory;
    private boolean closed;

    public KvPayloadStore(int totalBlocks, int bytesPerBlock, String kvLayout) {
        if (totalBlocks <= 0 || bytesPerBlock <= 0) {
            throw new IllegalArgumentException("totalBlocks and bytesPerBlock must be positive");
        }
        this.totalBlocks = totalBlocks;
        this.bytesPerBlock = bytesPerBlock;
        this.blocksPerSlab = Math.max(1, Math.min(totalBlocks, TARGET_SLAB_BYTES / bytesPerBlock));
        this.layoutSeed = KvPattern.layoutSeed(kvLayout);
        this.slabs = new ByteBuffer[(totalBlocks + blocksPerSlab - 1) / blocksPerSlab];
    }

    public int bytesPerBlock() {
        return bytesPerBlock;
    }

    /**
     * Takes slabs from {@code memory} from now on.
     *
     * @throws IllegalStateException when a slab was already allocated
     */
    public void useMemory(KvMemory memory) {
        if (allocatedBytes() > 0) {
            throw new IllegalStateException("KV payload memory is already allocated");
        }
        this.memory = memory;
    }

    /** Where slot {@code slot}'s bytes lie (allocating its slab if needed), labelled {@code seqHash}. */
    public KvBlockRef locate(int slot, long seqHash) {
        block(slot);
        return new KvBlockRef(seqHash, slot / blocksPerSlab, (long) (slot % blocksPerSlab) * bytesPerBlock, bytesPerBlock);
    }

    /** Stops all access: every later call that touches bytes throws {@link IllegalStateException}. */
    public void close() {
        closed = true;
    }

    /**
     * A view of slot {@code slot}'s bytes: position 0, limit {@link #bytesPerBlock()}. Writes through
     * it change the block. Valid until the store is dropped.
     */
    public ByteBuffer block(int slot) {
        if (slot < 0 || slot >= totalBlocks) {
            throw new IndexOutOfBoundsException("slot " + slot + " outside [0, " + totalBlocks + ")");
        }
        if (closed) {
            throw new IllegalStateException("the KV payload store is closed");
        }
        int s = slot / blocksPerSlab;
        ByteBuffer slab = slabs[s];
        if (slab == null) {
            int bytes = Math.min(blocksPerSlab, totalBlocks - s * blocksPerSlab) * bytesPerBlock;
            slab = memory == null ? ByteBuffer.allocateDirect(bytes) : memory.region(s, bytes);
            if (!slab.isDirect() || slab.capacity() != bytes) {
                throw new IllegalStateException("KV memory region " + s + " must be a direct buffer of " + bytes + " bytes");
            }
            slabs[s] = slab;
        }
        return slab.slice((slot % blocksPerSlab) * bytesPerBlock, bytesPerBlock);
    }

    /** Writes block {@code seqHash}'s pattern into {@code slot}. */
    public void fillPattern(int slot, long seqHash) {
        KvPattern.fill(block(slot), seqHash, layoutSeed);
    }

    /** Offset of the first byte of {@code slot} that is not block {@code seqHash}'s pattern, or -1. */
    public int firstMismatch(int slot, long seqHash) {
        return KvPattern.firstMismatch(block(slot), seqHash, layoutSeed);
    }

    /** Copies slot {@code slot}'s bytes into {@code dst} (which must have room), advancing its position. */
    public void read(int slot, ByteBuffer dst) {
        dst.put(block(slot));
    }

    /** Overwrites slot {@code slot} with exactly {@link #bytesPerBlock()} bytes from {@code src}. */
    public void write(int slot, ByteBuffer src) {
        if (src.remaining() < bytesPerBlock) {
            throw new IllegalArgumentException("need " + bytesPerBlock + " bytes, got " + src.remaining());
        }
        ByteBuffer chunk = src.slice(src.position(), bytesPerBlock);
        block(slot).put(chunk);
        src.position(src.position() + bytesPerBlock);
    }

    /** Direct memory allocated so far, in bytes. */
    public long allocatedBytes() {
        long total = 0;
        for (ByteBuffer slab : slabs) {
            total += slab == null ? 0 : slab.capacity();
        }
        return total;
    }
}
