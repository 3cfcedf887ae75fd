package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.worker.engine.KvEventListener;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a KV indexer would know about one engine: the sets obtained by replaying its events, one per
 * tier ({@link #resident} is the device's). It also checks what each event claims: batches arrive at
 * consecutive positions, a stored block is not already in its tier and a device block's parent is
 * resident, a removed block is in its tier.
 */
final class KvEventReplay implements KvEventListener {

    final Set<Long> resident = new HashSet<>();
    final Set<Long> host = new HashSet<>();
    final Set<Long> disk = new HashSet<>();
    final List<KvEvent> events = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    long position;

    @Override
    public void onEvents(long pos, List<KvEvent> batch) {
        if (pos != position + 1) {
            violations.add("batch at position " + pos + " after " + position);
        }
        if (batch.isEmpty()) {
            violations.add("empty batch at position " + pos);
        }
        position = pos;
        batch.forEach(this::apply);
    }

    void apply(KvEvent e) {
        events.add(e);
        switch (e.getEventCase()) {
            case STORED -> {
                Set<Long> tier = tier(e.getStored().getTier());
                long parent = e.getStored().getParentSeqHash();
                if (tier == resident && parent != 0 && !resident.contains(parent)) {
                    violations.add("stored block's parent " + Long.toHexString(parent) + " is not resident");
                }
                for (StoredBlock b : e.getStored().getBlocksList()) {
                    if (!tier.add(b.getSeqHash())) {
                        violations.add("stored twice in " + e.getStored().getTier() + ": " + Long.toHexString(b.getSeqHash()));
                    }
                }
            }
            case REMOVED -> {
                Set<Long> tier = tier(e.getRemoved().getTier());
                e.getRemoved().getSeqHashesList().forEach(h -> {
                    if (!tier.remove(h)) {
                        violations.add("removed but not in " + e.getRemoved().getTier() + ": " + Long.toHexString(h));
                    }
                });
            }
            case CLEARED -> {
                if (e.getCleared().getTier() == KvTier.KV_TIER_UNSPECIFIED) {
                    resident.clear();
                    host.clear();
                    disk.clear();
                } else {
                    tier(e.getCleared().getTier()).clear();
                }
            }
            default -> violations.add("event without a body");
        }
    }

    private Set<Long> tier(KvTier t) {
        return switch (t) {
            case KV_TIER_HOST -> host;
            case KV_TIER_DISK -> disk;
            default -> resident;
        };
    }

    /** Seq hashes removed, in event order. */
    List<Long> removedInOrder() {
        List<Long> out = new ArrayList<>();
        for (KvEvent e : events) {
            if (e.hasRemoved() && e.getRemoved().getTier() == KvTier.KV_TIER_DEVICE) {
                out.addAll(e.getRemoved().getSeqHashesList());
            }
        }
        return out;
    }

    /** Seq hashes stored, in event order. */
    List<Long> storedInOrder() {
        List<Long> out = new ArrayList<>();
        for (KvEvent e : events) {
            if (e.hasStored() && e.getStored().getTier() == KvTier.KV_TIER_DEVICE) {
                e.getStored().getBlocksList().forEach(b -> out.add(b.getSeqHash()));
            }
        }
        return out;
    }

    static Set<Long> asSet(long[] hashes) {
        Set<Long> out = new HashSet<>();
        for (long h : hashes) {
            out.add(h);
        }
        return out;
    }
}
