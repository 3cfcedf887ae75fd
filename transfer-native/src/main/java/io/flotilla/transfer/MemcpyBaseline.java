package io.flotilla.transfer;

import java.nio.ByteBuffer;

/** Single-thread memcpy timing, the yardstick transfer bandwidth is compared with (benchmarks only). */
public final class MemcpyBaseline {

    private MemcpyBaseline() {
    }

    /**
     * Nanoseconds to copy {@code src} into {@code dst} (both direct, same capacity) {@code iters} times
     * in {@code block}-sized memcpy calls: C memcpy when the native library loaded, otherwise
     * {@link ByteBuffer#put(ByteBuffer)}.
     */
    public static long nanos(ByteBuffer dst, ByteBuffer src, int block, int iters) {
        int total = Math.min(dst.capacity(), src.capacity()) / block * block;
        if (NativeLibrary.loaded()) {
            return NativeBridge.benchMemcpy(NativeBridge.bufferAddress(dst), NativeBridge.bufferAddress(src), block, total, iters);
        }
        long t0 = System.nanoTime();
        for (int it = 0; it < iters; it++) {
            for (int off = 0; off < total; off += block) {
                dst.put(off, src, off, block);
            }
        }
        return System.nanoTime() - t0;
    }

    /** Which implementation {@link #nanos} uses. */
    public static String implementation() {
        return NativeLibrary.loaded() ? "C memcpy" : "ByteBuffer.put";
    }
}
