package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.worker.engine.KvEventListener;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a KV indexer would know about one engine: the set obtained by replaying its events. It
 * also checks what each event claims: batches arrive at consecutive positions, a stored block is
 * not already resident and its parent is, a removed block is resident.
 */
final class KvEventReplay implements KvEventListener {

    final Set<Long> resident = new HashSet<>();
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
                long parent = e.getStored().getParentSeqHash();
                if (parent != 0 && !resident.contains(parent)) {
                    violations.add("stored block's parent " + Long.toHexString(parent) + " is not resident");
                }
                for (StoredBlock b : e.getStored().getBlocksList()) {
                    if (!resident.add(b.getSeqHash())) {
                        violations.add("stored twice: " + Long.toHexString(b.getSeqHash()));
                    }
                }
            }
            case REMOVED -> e.getRemoved().getSeqHashesList().forEach(h -> {
                if (!resident.remove(h)) {
                    violations.add("removed but not resident: " + Long.toHexString(h));
                }
            });
            case CLEARED -> resident.clear();
            default -> violations.add("event without a body");
        }
    }

    /** Seq hashes removed, in event order. */
    List<Long> removedInOrder() {
        List<Long> out = new ArrayList<>();
        for (KvEvent e : events) {
            if (e.hasRemoved()) {
                out.addAll(e.getRemoved().getSeqHashesList());
            }
        }
        return out;
    }

    /** Seq hashes stored, in event order. */
    List<Long> storedInOrder() {
        List<Long> out = new ArrayList<>();
        for (KvEvent e : events) {
            if (e.hasStored()) {
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
