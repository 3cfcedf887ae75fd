package io.flotilla.transfer;

import java.util.EnumSet;
import java.util.Set;

/**
 * A way of moving bytes between agents. When several apply to a request the agent prefers
 * {@link #SHM}, then {@link #UCX}, then {@link #TCP}.
 */
public enum Backend {
    /** Any host: bytes stream over the target's listener, which validates every descriptor first. */
    TCP(1),
    /**
     * Same host: one memcpy into (or out of) a remote region the remote agent allocated with
     * {@link TransferAgent#allocateShared(long)}; the target leases the descriptors over its listener.
     */
    SHM(2),
    /** UCX one-sided put/get; present only when the native library was built against libucx. */
    UCX(4);

    private final int bit;

    Backend(int bit) {
        this.bit = bit;
    }

    /** The bit the native library and the metadata use for this backend. */
    public int bit() {
        return bit;
    }

    static int bits(Set<Backend> backends) {
        int bits = 0;
        for (Backend b : backends) {
            bits |= b.bit;
        }
        return bits;
    }

    static Set<Backend> fromBits(int bits) {
        Set<Backend> set = EnumSet.noneOf(Backend.class);
        for (Backend b : values()) {
            if ((bits & b.bit) != 0) {
                set.add(b);
            }
        }
        return set;
    }

    static Backend fromBit(int bit) {
        for (Backend b : values()) {
            if (b.bit == bit) {
                return b;
            }
        }
        throw new IllegalArgumentException("no backend has bit " + bit);
    }
}
