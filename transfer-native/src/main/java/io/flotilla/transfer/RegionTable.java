package io.flotilla.transfer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Java engine's registered regions and their pins: the same rules as the native agent.
 * A descriptor is resolved and every region it touches pinned under one lock, all or nothing;
 * {@link #remove} marks a region dead (nothing new may pin it) and waits until its pins drop.
 * Region ids start at 1 and are never reused; a region's synthetic base is {@code id << 40}.
 */
final class RegionTable {

    /** Regions whose synthetic bases never overlap: each gets a 1 TiB window. */
    static final int BASE_SHIFT = 40;

    private static final class Entry {
        final Registration registration;
        final ByteBuffer buffer;
        int pins;
        boolean dead;

        Entry(Registration registration, ByteBuffer buffer) {
            this.registration = registration;
            this.buffer = buffer;
        }
    }

    /** Pinned descriptors: one view per descriptor, to be released with {@link #unpin}. */
    record Pinned(List<Entry> entries, ByteBuffer[] views) {
        long bytes() {
            long total = 0;
            for (ByteBuffer v : views) {
                total += v.remaining();
            }
            return total;
        }
    }

    private final String agent;
    private final Map<Long, Entry> regions = new LinkedHashMap<>();
    private long nextId = 1;

    RegionTable(String agent) {
        this.agent = agent;
    }

    synchronized Registration add(ByteBuffer buffer, boolean shared) {
        long id = nextId++;
        Registration r = new Registration(agent, id, id << BASE_SHIFT, buffer.capacity(), MemoryKind.DRAM, shared, Optional.of(buffer));
        regions.put(id, new Entry(r, buffer.duplicate().clear()));
        return r;
    }

    synchronized void remove(long id) throws InterruptedException {
        Entry e = regions.get(id);
        if (e == null || e.dead) {
            throw new TransferException(ErrorCode.UNKNOWN_REGION, "region " + id + " is not registered with '" + agent + "'");
        }
        e.dead = true;
        while (e.pins > 0) {
            wait();
        }
        regions.remove(id);
    }

    synchronized List<AgentMetadata.Region> describe() {
        List<AgentMetadata.Region> out = new ArrayList<>();
        for (Entry e : regions.values()) {
            if (!e.dead) {
                Registration r = e.registration;
                out.add(new AgentMetadata.Region(r.id(), r.base(), r.length(), 0, r.shared(), "", new byte[0]));
            }
        }
        return out;
    }

    /** Resolves and pins (region, offset, length) triples; throws without pinning anything on a bad one. */
    synchronized Pinned pin(long[] triples) {
        int n = triples.length / 3;
        List<Entry> entries = new ArrayList<>(n);
        ByteBuffer[] views = new ByteBuffer[n];
        for (int i = 0; i < n; i++) {
            long region = triples[3 * i], offset = triples[3 * i + 1], length = triples[3 * i + 2];
            if (length <= 0) {
                throw new TransferException(ErrorCode.INVALID_ARGUMENT, "descriptor " + i + " has length " + length);
            }
            if (region == XferDescList.ADDRESS) {
                region = offset >>> BASE_SHIFT;
                offset = offset & ((1L << BASE_SHIFT) - 1);
                Entry e = regions.get(region);
                if (e == null || e.dead || !fits(e, offset, length)) {
                    throw new TransferException(ErrorCode.OUT_OF_BOUNDS, "address range [0x" + Long.toHexString(triples[3 * i + 1]) + ", +"
                            + length + ") is not inside memory registered with '" + agent + "'");
                }
            }
            Entry e = regions.get(region);
            if (e == null || e.dead) {
                throw new TransferException(ErrorCode.UNKNOWN_REGION, "region " + region + " is not registered with '" + agent + "' (unknown or deregistered)");
            }
            if (!fits(e, offset, length)) {
                throw new TransferException(ErrorCode.OUT_OF_BOUNDS, "[" + offset + ", +" + length + ") is outside region " + region
                        + " of '" + agent + "' (" + e.registration.length() + " bytes)");
            }
            entries.add(e);
            views[i] = e.buffer.slice((int) offset, (int) length);
        }
        for (Entry e : entries) {
            e.pins++;
        }
        return new Pinned(entries, views);
    }

    synchronized void unpin(Pinned p) {
        for (Entry e : p.entries()) {
            e.pins--;
        }
        notifyAll();
    }

    private static boolean fits(Entry e, long offset, long length) {
        long len = e.registration.length();
        return offset >= 0 && length <= len && offset <= len - length;
    }
}
