package io.flotilla.transfer;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Optional;

/**
 * Memory to register with an agent: a direct {@link ByteBuffer} (its whole capacity, from index 0)
 * or a raw native address range. Descriptor offsets are relative to the start of the region.
 *
 * <p>The caller keeps the memory alive until {@link TransferAgent#deregister} returns; the agent
 * keeps a reference to a registered buffer so that it cannot be collected while registered.
 */
public final class MemoryRegion {

    private final MemoryKind kind;
    private final ByteBuffer buffer;
    private final long address;
    private final long length;
    private final int device;

    private MemoryRegion(MemoryKind kind, ByteBuffer buffer, long address, long length, int device) {
        this.kind = kind;
        this.buffer = buffer;
        this.address = address;
        this.length = length;
        this.device = device;
    }

    /** A direct buffer's whole capacity. Heap buffers are refused: the garbage collector moves them. */
    public static MemoryRegion of(ByteBuffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        if (!buffer.isDirect()) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "only direct ByteBuffers can be registered (heap buffers move)");
        }
        if (buffer.capacity() == 0) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "cannot register an empty buffer");
        }
        return new MemoryRegion(MemoryKind.DRAM, buffer, 0, buffer.capacity(), 0);
    }

    /** Host memory at a native address (from another native library); needs the native engine. */
    public static MemoryRegion ofAddress(long address, long length) {
        return raw(MemoryKind.DRAM, address, length, 0);
    }

    /** GPU memory. Reserved for a CUDA build: registering it fails with {@link ErrorCode#UNSUPPORTED}. */
    public static MemoryRegion vram(int device, long address, long length) {
        return raw(MemoryKind.VRAM, address, length, device);
    }

    private static MemoryRegion raw(MemoryKind kind, long address, long length, int device) {
        if (address == 0 || length <= 0) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "a region needs a non-zero address and a positive length");
        }
        return new MemoryRegion(kind, null, address, length, device);
    }

    public MemoryKind kind() {
        return kind;
    }

    public Optional<ByteBuffer> buffer() {
        return Optional.ofNullable(buffer);
    }

    /** The native address; 0 for a buffer region (the agent resolves it). */
    public long address() {
        return address;
    }

    public long length() {
        return length;
    }

    public int device() {
        return device;
    }

    @Override
    public String toString() {
        return "MemoryRegion[" + kind + (buffer != null ? ", direct buffer" : ", 0x" + Long.toHexString(address)) + ", " + length + " bytes]";
    }
}
