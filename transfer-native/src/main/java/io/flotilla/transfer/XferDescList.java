package io.flotilla.transfer;

import java.util.Arrays;

/**
 * An ordered list of memory descriptors (region id or address, offset, length). A transfer pairs
 * the i-th local descriptor with the i-th remote one; paired lengths must be equal.
 *
 * <p>A descriptor with region id {@link #ADDRESS} names memory by absolute address: its offset is
 * the address, resolved against the agent's (or, for remote lists, the remote metadata's)
 * registered regions. Validation happens when a request is posted, not here. Not thread-safe.
 */
public final class XferDescList {

    /** Region id meaning "offset is an absolute address". */
    public static final long ADDRESS = 0;

    private long[] triples = new long[24];
    private int size;

    /** @param region region id, or {@link #ADDRESS} */
    public record Desc(long region, long offset, long length) {
    }

    public static XferDescList of() {
        return new XferDescList();
    }

    public XferDescList add(long region, long offset, long length) {
        if (region < 0 || offset < 0 || length <= 0) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT,
                    "descriptor (" + region + ", " + offset + ", " + length + ") needs region >= 0, offset >= 0, length > 0");
        }
        if (3 * size + 3 > triples.length) {
            triples = Arrays.copyOf(triples, triples.length * 2);
        }
        triples[3 * size] = region;
        triples[3 * size + 1] = offset;
        triples[3 * size + 2] = length;
        size++;
        return this;
    }

    public XferDescList add(Registration region, long offset, long length) {
        return add(region.id(), offset, length);
    }

    /** Memory by absolute address (inside some registered region). */
    public XferDescList addAddress(long address, long length) {
        return add(ADDRESS, address, length);
    }

    public int size() {
        return size;
    }

    public Desc get(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException(i);
        }
        return new Desc(triples[3 * i], triples[3 * i + 1], triples[3 * i + 2]);
    }

    public long totalBytes() {
        long total = 0;
        for (int i = 0; i < size; i++) {
            total += triples[3 * i + 2];
        }
        return total;
    }

    /** (region, offset, length) triples, a copy. */
    long[] triples() {
        return Arrays.copyOf(triples, 3 * size);
    }

    @Override
    public String toString() {
        return "XferDescList[" + size + " descriptors, " + totalBytes() + " bytes]";
    }
}
