package io.flotilla.worker.engine.sim;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The deterministic bytes a simulated KV block holds, so a transferred block can be checked byte
 * for byte on the receiving side without knowing anything but its seq_hash and the KV layout.
 *
 * <pre>
 * layout_seed = splitmix64_mix(FNV-1a-64(utf8(kv_layout)))
 * state_0     = seq_hash XOR layout_seed
 * state_i     = state_{i-1} + 0x9E3779B97F4A7C15        (i = 1, 2, ...)
 * word_i      = splitmix64_mix(state_i)                  (i = 1, 2, ...)
 * bytes       = le64(word_1) ‖ le64(word_2) ‖ ...   truncated to the block's length
 * </pre>
 *
 * Stable across processes and versions; changing it breaks transfer verification between agents.
 */
public final class KvPattern {

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private KvPattern() {
    }

    /** The layout's contribution to every pattern seed. */
    public static long layoutSeed(String kvLayout) {
        long h = 0xcbf29ce484222325L;
        for (byte b : kvLayout.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return mix(h);
    }

    /** The first {@code length} bytes of the pattern of block {@code seqHash} under {@code kvLayout}. */
    public static byte[] expectedPattern(long seqHash, String kvLayout, int length) {
        byte[] out = new byte[length];
        fill(ByteBuffer.wrap(out), seqHash, layoutSeed(kvLayout));
        return out;
    }

    /** Fills {@code dst} from its position to its limit with the pattern; the position is not moved. */
    public static void fill(ByteBuffer dst, long seqHash, long layoutSeed) {
        ByteBuffer le = dst.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int at = le.position();
        int end = le.limit();
        long state = seqHash ^ layoutSeed;
        while (at + 8 <= end) {
            state += GOLDEN;
            le.putLong(at, mix(state));
            at += 8;
        }
        if (at < end) {
            state += GOLDEN;
            long word = mix(state);
            for (int shift = 0; at < end; at++, shift += 8) {
                le.put(at, (byte) (word >>> shift));
            }
        }
    }

    /**
     * Offset (relative to {@code data}'s position) of the first byte from position to limit that
     * differs from the pattern, or -1 when they all match. The buffer's position is not moved.
     */
    public static int firstMismatch(ByteBuffer data, long seqHash, long layoutSeed) {
        ByteBuffer le = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int start = le.position();
        int end = le.limit();
        long state = seqHash ^ layoutSeed;
        for (int at = start; at < end; at += 8) {
            state += GOLDEN;
            long word = mix(state);
            if (at + 8 <= end && le.getLong(at) == word) {
                continue;
            }
            for (int i = 0; i < 8 && at + i < end; i++) {
                if (le.get(at + i) != (byte) (word >>> (8 * i))) {
                    return at + i - start;
                }
            }
        }
        return -1;
    }

    /** True when every byte from {@code data}'s position to its limit matches the pattern. */
    public static boolean verify(ByteBuffer data, long seqHash, String kvLayout) {
        return firstMismatch(data, seqHash, layoutSeed(kvLayout)) < 0;
    }

    /** The splitmix64 finaliser. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
