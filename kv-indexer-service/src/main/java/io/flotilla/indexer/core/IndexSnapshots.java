package io.flotilla.indexer.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Export of the applier's workers and index to an {@link IndexSnapshot}, and the restore. */
final class IndexSnapshots {

    private IndexSnapshots() {
    }

    /** Live and unverified workers with their blocks; one scan of the index. */
    static IndexSnapshot export(WorkerBook book, long nowMs) {
        List<Map<String, long[]>> blocks = new ArrayList<>();
        for (int tier = 0; tier < Tiers.COUNT; tier++) {
            blocks.add(book.index.exportBlocks(tier));
        }
        List<WorkerSnapshot> workers = new ArrayList<>();
        long[] none = new long[0];
        for (WorkerRecord r : book.all()) {
            if (r.isCurrent()) {
                workers.add(new WorkerSnapshot(r.id, r.epoch, r.cursor, r.lastTs, r.state == WorkerState.LIVE,
                        blocks.get(Tiers.DEVICE).getOrDefault(r.id, none), blocks.get(Tiers.HOST).getOrDefault(r.id, none),
                        blocks.get(Tiers.DISK).getOrDefault(r.id, none)));
            }
        }
        return new IndexSnapshot(nowMs, workers);
    }

    /** Loads {@code snapshot} into an empty book; returns reconciliations for unverified workers. */
    static List<ReconcileRequest> restore(WorkerBook book, IndexSnapshot snapshot, long nowMs) {
        if (!book.isEmpty()) {
            throw new IllegalStateException("import into a non-empty applier");
        }
        List<WorkerRecord> restored = new ArrayList<>();
        List<Map<Integer, Integer>> perGroup = new ArrayList<>();
        for (int tier = 0; tier < Tiers.COUNT; tier++) {
            perGroup.add(new HashMap<>());
        }
        for (WorkerSnapshot w : snapshot.workers()) {
            WorkerRecord r = book.adopt(book.get(w.workerId()), w.workerId(), w.epoch());
            r.cursor = w.lastSeq();
            r.lastTs = w.lastTs();
            book.setDeadline(r, nowMs + book.settings.provisionalLeaseMs());
            for (int tier = 0; tier < Tiers.COUNT; tier++) {
                perGroup.get(tier).merge(book.slotOf(r) >>> 6, w.tier(tier).length, Integer::sum);
            }
            restored.add(r);
        }
        // one table allocation per group and tier, sized for everything it will hold
        for (int tier = 0; tier < Tiers.COUNT; tier++) {
            int t = tier;
            perGroup.get(tier).forEach((group, blocks) -> book.index.reserve(group << 6, t, blocks));
        }
        List<ReconcileRequest> out = new ArrayList<>();
        for (int i = 0; i < restored.size(); i++) {
            WorkerRecord r = restored.get(i);
            WorkerSnapshot w = snapshot.workers().get(i);
            int slot = r.slot;
            for (int tier = 0; tier < Tiers.COUNT; tier++) {
                for (long h : w.tier(tier)) {
                    book.index.storeAt(slot, tier, h);
                }
            }
            if (!w.verified()) {
                out.add(book.requestReconcile(r, ReconcileRequest.Reason.RESTORED, nowMs));
            }
        }
        return out;
    }
}
