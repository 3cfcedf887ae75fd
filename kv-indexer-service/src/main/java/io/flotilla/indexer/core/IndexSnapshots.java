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
        Map<String, long[]> blocks = book.index.exportBlocks();
        List<WorkerSnapshot> workers = new ArrayList<>();
        for (WorkerRecord r : book.all()) {
            if (r.isCurrent()) {
                workers.add(new WorkerSnapshot(r.id, r.epoch, r.cursor, r.lastTs, r.state == WorkerState.LIVE,
                        blocks.getOrDefault(r.id, new long[0])));
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
        Map<Integer, Integer> perGroup = new HashMap<>();
        for (WorkerSnapshot w : snapshot.workers()) {
            WorkerRecord r = book.adopt(book.get(w.workerId()), w.workerId(), w.epoch());
            r.cursor = w.lastSeq();
            r.lastTs = w.lastTs();
            book.setDeadline(r, nowMs + book.settings.provisionalLeaseMs());
            perGroup.merge(book.slotOf(r) >>> 6, w.seqHashes().length, Integer::sum);
            restored.add(r);
        }
        // one table allocation per group, sized for everything it will hold
        perGroup.forEach((group, blocks) -> book.index.reserve(group << 6, blocks));
        List<ReconcileRequest> out = new ArrayList<>();
        for (int i = 0; i < restored.size(); i++) {
            WorkerRecord r = restored.get(i);
            WorkerSnapshot w = snapshot.workers().get(i);
            int slot = r.slot;
            for (long h : w.seqHashes()) {
                book.index.storeAt(slot, h);
            }
            if (!w.verified()) {
                out.add(book.requestReconcile(r, ReconcileRequest.Reason.RESTORED, nowMs));
            }
        }
        return out;
    }
}
