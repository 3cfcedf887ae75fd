package io.flotilla.gguf;

import java.util.List;

/**
 * A tensor's entry in a GGUF file.
 *
 * @param name     llama.cpp's name, e.g. {@code blk.0.attn_q.weight}
 * @param dims     ggml's order: {@code dims.get(0)} is the fastest-varying (row length)
 * @param ggmlType ggml's type code ({@link #F32} = 0, {@link #F16} = 1, quantised types above)
 * @param offset   bytes from the start of the data section; a multiple of the file's alignment
 */
public record GgufTensorInfo(String name, List<Long> dims, int ggmlType, long offset) {

    public static final int F32 = 0;
    public static final int F16 = 1;

    public GgufTensorInfo {
        dims = List.copyOf(dims);
    }

    /** Number of elements. */
    public long elements() {
        long n = 1;
        for (long d : dims) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }
}
