package io.flotilla.transfer;

/** Where registered memory lives. This build moves {@link #DRAM} only. */
public enum MemoryKind {
    /** Host memory: direct ByteBuffers, native addresses, shared-memory allocations. */
    DRAM(0),
    /** GPU memory: reserved for a CUDA build; registering it fails with {@link ErrorCode#UNSUPPORTED}. */
    VRAM(1);

    private final int code;

    MemoryKind(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }

    static MemoryKind fromCode(int code) {
        return code == 1 ? VRAM : DRAM;
    }
}
