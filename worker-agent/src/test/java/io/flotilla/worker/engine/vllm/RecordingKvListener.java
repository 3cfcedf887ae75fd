package io.flotilla.worker.engine.vllm;

import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.worker.engine.KvEventListener;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a KV indexer would know from one worker's events: the set obtained by replaying them, with
 * the contract checks (consecutive positions, non-empty batches, no double store, no removal of a
 * block that is not resident).
 */
public final class RecordingKvListener implements KvEventListener {

    private final Set<Long> resident = new HashSet<>();
    private final List<KvEvent> events = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private long position;

    @Override
    public synchronized void onEvents(long pos, List<KvEvent> batch) {
        if (pos != position + 1) {
            violations.add("batch at position " + pos + " after " + position);
        }
        if (batch.isEmpty()) {
            violations.add("empty batch at " + pos);
        }
        position = pos;
        for (KvEvent e : batch) {
            events.add(e);
            switch (e.getEventCase()) {
                case STORED -> e.getStored().getBlocksList().forEach(b -> {
                    if (!resident.add(b.getSeqHash())) {
                        violations.add("stored twice: " + Long.toHexString(b.getSeqHash()));
                    }
                });
                case REMOVED -> e.getRemoved().getSeqHashesList().forEach(h -> {
                    if (!resident.remove(h)) {
                        violations.add("removed but not resident: " + Long.toHexString(h));
                    }
                });
                case CLEARED -> resident.clear();
                default -> violations.add("event without a body");
            }
        }
    }

    public synchronized long position() {
        return position;
    }

    public synchronized Set<Long> resident() {
        return Set.copyOf(resident);
    }

    public synchronized List<KvEvent> events() {
        return List.copyOf(events);
    }

    public synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    /** Seq hashes stored, in event order. */
    public synchronized List<Long> storedInOrder() {
        List<Long> out = new ArrayList<>();
        for (KvEvent e : events) {
            if (e.hasStored()) {
                e.getStored().getBlocksList().stream().map(StoredBlock::getSeqHash).forEach(out::add);
            }
        }
        return out;
    }

    public static Set<Long> asSet(long[] hashes) {
        Set<Long> out = new HashSet<>();
        for (long h : hashes) {
            out.add(h);
        }
        return out;
    }
}
