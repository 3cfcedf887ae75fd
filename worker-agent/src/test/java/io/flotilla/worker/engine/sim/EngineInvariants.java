package io.flotilla.worker.engine.sim;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * The named invariants between a scheduler and what its KV events tell an indexer. Returns the
 * breaches instead of throwing, so a self-test can show each one can fail.
 */
final class EngineInvariants {

    private EngineInvariants() {
    }

    static List<String> check(Scheduler s, KvEventReplay replay, Collection<String> requestIds) {
        List<String> breaches = new ArrayList<>(replay.violations);
        BlockPool pool = s.pool();
        try {
            pool.verifyInvariants(); // no negative refcount; free + active + cached == total
        } catch (IllegalStateException e) {
            breaches.add("pool: " + e.getMessage());
        }
        Set<Long> engineSet = KvEventReplay.asSet(s.residentBlocks().seqHashes());
        if (!engineSet.equals(replay.resident)) {
            breaches.add("replayed events give " + replay.resident.size() + " blocks, engine holds "
                    + engineSet.size());
        }
        if (s.residentBlocks().position() != replay.position) {
            breaches.add("snapshot position " + s.residentBlocks().position() + " != delivered " + replay.position);
        }
        for (String id : requestIds) {
            for (int slot : s.slotsOf(id)) {
                if (pool.refCount(slot) <= 0) {
                    breaches.add(id + " holds slot " + slot + " with refcount " + pool.refCount(slot));
                } else if (pool.isRegistered(slot) && !replay.resident.contains(pool.seqHashOf(slot))) {
                    breaches.add(id + " references block " + Long.toHexString(pool.seqHashOf(slot))
                            + " that the events do not show as resident");
                }
            }
        }
        return breaches;
    }
}
