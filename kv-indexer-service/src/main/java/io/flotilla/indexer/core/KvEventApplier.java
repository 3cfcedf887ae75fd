package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.BlockRemoved;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.IndexDigest;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The indexer's state machine: KV event batches, membership, load digests and worker snapshots in,
 * {@link PrefixIndex} changes and {@link ReconcileRequest} decisions out. Pure: no I/O, no clock of
 * its own (every input carries {@code nowMs}), no calls out.
 *
 * <p>Threading: every {@code on*}, {@code tick}, feed-health, export and import call comes from one
 * writer thread (the shell funnels the three topics and snapshot answers into it). {@link #index()},
 * {@link #workers()}, {@link #worker}, {@link #stats()} and {@link #lastAppliedAtMs()} may be read
 * from any thread.
 *
 * <p>Rules (see ARCHITECTURE "Kafka topics" and {@code package-info}):
 * <ul>
 *   <li>Tiers: a Stored or Removed of tier T changes only tier T (UNSPECIFIED: the device); an
 *       AllBlocksCleared of tier T empties T, one without a tier every tier; a snapshot replaces all
 *       three; the load digest is compared per tier.</li>
 *   <li>Per (worker, epoch) cursor: {@code seq <= cursor} is a duplicate; {@code seq == cursor + 1} is
 *       applied; {@code seq > cursor + 1} is a gap: the worker turns UNVERIFIED, keeps being served,
 *       buffers batches, and a snapshot is requested. A snapshot replaces the worker's set, then
 *       buffered batches above its seq are applied in order.</li>
 *   <li>Epochs are random, so "newer" is decided by evidence: an unknown epoch replaces the current
 *       one through a WorkerStatus whose ts is newer than anything seen for the current epoch, or a
 *       batch with seq 1 (a process start; Kafka keeps one worker id's batches in order), or a batch
 *       with a newer ts. The replaced epoch is remembered as retired and its late inputs are stale.</li>
 *   <li>Leases run on the indexer's clock ({@code nowMs}, the receive time): deadline = receive time of
 *       the last status + lease_ms ({@link WorkerBook#leaseFrom}); worker timestamps only order records,
 *       so a worker clock skewed by any amount neither expires early nor lives forever. A worker
 *       expires when {@code now > deadline} while the membership feed is healthy; while it is
 *       unhealthy nothing expires, and on recovery every deadline moves by the outage length. STOPPED
 *       drops the worker at once. KV batches and load reports never extend a lease.</li>
 * </ul>
 */
public final class KvEventApplier {

    private final PrefixIndex index;
    private final ApplierSettings settings;
    private final WorkerBook book;
    private final ApplierCounters counters;

    public KvEventApplier(PrefixIndex index, ApplierSettings settings) {
        this.index = index;
        this.settings = settings;
        this.book = new WorkerBook(index, settings);
        this.counters = book.counters;
    }

    // ------------------------------------------------------------------ KV events

    /** One batch from {@code flotilla.kv-events}. */
    public Outcome onBatch(KvEventBatch batch, long nowMs) {
        book.expireDue(nowMs);
        String id = batch.getWorkerId();
        long epoch = batch.getEpoch();
        long seq = batch.getSeq();
        long ts = batch.getTs();
        WorkerRecord r = book.get(id);
        if (r != null && r.epoch == epoch) {
            if (!r.isCurrent()) {
                counters.staleBatches++;
                return Outcome.STALE;
            }
        } else {
            boolean older = r != null && (r.isRetired(epoch) || (seq != 1 && ts <= r.lastTs));
            long deadline = book.leaseFrom(nowMs, settings.provisionalLeaseMs());
            if (older) {
                counters.staleBatches++;
                return Outcome.STALE;
            }
            r = book.adopt(r, id, epoch);
            book.setDeadline(r, deadline);
        }
        r.lastTs = Math.max(r.lastTs, ts);
        return advance(r, batch, nowMs);
    }

    private Outcome advance(WorkerRecord r, KvEventBatch batch, long nowMs) {
        long seq = batch.getSeq();
        if (seq <= r.cursor) {
            counters.duplicates++;
            return Outcome.DUPLICATE;
        }
        if (r.state == WorkerState.UNVERIFIED) {
            if (r.buffered.putIfAbsent(seq, batch) != null) {
                counters.duplicates++;
                return Outcome.DUPLICATE;
            }
            while (r.buffered.size() > settings.maxBufferedBatches()) {
                r.buffered.pollFirstEntry();
                counters.bufferOverflows++;
            }
            return Outcome.BUFFERED;
        }
        if (seq == r.cursor + 1) {
            apply(r, batch, nowMs);
            return Outcome.APPLIED;
        }
        counters.gaps++;
        r.buffered.put(seq, batch);
        return Outcome.of(Verdict.BUFFERED, book.requestReconcile(r, ReconcileRequest.Reason.GAP, nowMs));
    }

    private void apply(WorkerRecord r, KvEventBatch batch, long nowMs) {
        int slot = book.slotOf(r);
        long blockEvents = 0;
        for (int e = 0; e < batch.getEventsCount(); e++) {
            KvEvent event = batch.getEvents(e);
            switch (event.getEventCase()) {
                case STORED -> {
                    BlockStored stored = event.getStored();
                    int tier = Tiers.of(stored.getTier());
                    int n = stored.getBlocksCount();
                    for (int i = 0; i < n; i++) {
                        index.storeAt(slot, tier, stored.getBlocks(i).getSeqHash());
                    }
                    blockEvents += n;
                }
                case REMOVED -> {
                    BlockRemoved removed = event.getRemoved();
                    int tier = Tiers.of(removed.getTier());
                    int n = removed.getSeqHashesCount();
                    for (int i = 0; i < n; i++) {
                        index.removeAt(slot, tier, removed.getSeqHashes(i));
                    }
                    blockEvents += n;
                }
                case CLEARED -> {
                    if (event.getCleared().getTier() == KvTier.KV_TIER_UNSPECIFIED) {
                        index.clearAt(slot);
                    } else {
                        index.clearAt(slot, Tiers.of(event.getCleared().getTier()));
                    }
                    blockEvents++;
                }
                case EVENT_NOT_SET -> {
                    // an event kind this version does not know: skipped; the digest check catches drift
                }
            }
        }
        r.cursor = batch.getSeq();
        counters.batchesApplied++;
        counters.eventsApplied += batch.getEventsCount();
        counters.blockEventsApplied += blockEvents;
        book.lastAppliedAtMs = nowMs;
    }

    // ------------------------------------------------------------------ snapshots

    /** A worker's answer to {@code GetKvSnapshot}: its device, host-memory and disk tiers. */
    public Outcome onSnapshot(KvSnapshot snapshot, long nowMs) {
        long[][] tiers = new long[Tiers.COUNT][];
        tiers[Tiers.DEVICE] = toArray(snapshot.getSeqHashesList());
        tiers[Tiers.HOST] = toArray(snapshot.getHostSeqHashesList());
        tiers[Tiers.DISK] = toArray(snapshot.getDiskSeqHashesList());
        return applySnapshot(snapshot.getWorkerId(), snapshot.getEpoch(), snapshot.getSeq(), tiers, nowMs);
    }

    private static long[] toArray(List<Long> hashes) {
        long[] out = new long[hashes.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = hashes.get(i);
        }
        return out;
    }

    /** As {@link #applySnapshot(String, long, long, long[][], long)} for a worker without lower tiers. */
    public Outcome applySnapshot(String workerId, long epoch, long seq, long[] seqHashes, long nowMs) {
        return applySnapshot(workerId, epoch, seq, new long[][] {seqHashes, new long[0], new long[0]}, nowMs);
    }

    /**
     * Replaces {@code workerId}'s sets with {@code tiers} (device, host, disk) as of batch {@code seq} of {@code epoch},
     * then applies buffered batches above {@code seq} in order. A snapshot never revives an expired
     * worker and never moves a cursor backwards; one from a not-yet-seen (not retired) epoch comes
     * straight from the live process and is adopted.
     */
    public Outcome applySnapshot(String workerId, long epoch, long seq, long[][] tiers, long nowMs) {
        book.expireDue(nowMs);
        WorkerRecord r = book.get(workerId);
        if (r == null || !r.isCurrent() || (r.epoch != epoch && r.isRetired(epoch))) {
            counters.staleSnapshots++;
            return Outcome.STALE;
        }
        if (r.epoch != epoch) {
            long deadline = r.leaseDeadlineMs;
            r = book.adopt(r, workerId, epoch);
            book.setDeadline(r, deadline);
        }
        if (seq < r.cursor) {
            counters.staleSnapshots++;
            return r.state == WorkerState.UNVERIFIED
                    ? Outcome.of(Verdict.STALE, book.requestReconcile(r, ReconcileRequest.Reason.STALE_SNAPSHOT, nowMs))
                    : Outcome.STALE;
        }
        int slot = book.slotOf(r);
        for (int tier = 0; tier < Tiers.COUNT; tier++) {
            index.replaceAt(slot, tier, tiers[tier]);
        }
        r.cursor = seq;
        counters.reconciliationsApplied++;
        book.lastAppliedAtMs = nowMs;
        while (!r.buffered.isEmpty()) {
            KvEventBatch next = r.buffered.firstEntry().getValue();
            if (next.getSeq() <= r.cursor) {
                r.buffered.pollFirstEntry();
                counters.duplicates++;
            } else if (next.getSeq() == r.cursor + 1) {
                r.buffered.pollFirstEntry();
                apply(r, next, nowMs);
            } else {
                counters.gaps++;
                return Outcome.of(Verdict.APPLIED, book.requestReconcile(r, ReconcileRequest.Reason.GAP, nowMs));
            }
        }
        r.state = WorkerState.LIVE;
        return Outcome.APPLIED;
    }

    // ------------------------------------------------------------------ membership and load

    /** One record from {@code flotilla.workers}. */
    public Outcome onStatus(WorkerStatus status, long nowMs) {
        Outcome out = status(status, nowMs);
        book.expireDue(nowMs);
        return out;
    }

    private Outcome status(WorkerStatus s, long nowMs) {
        String id = s.getWorkerId();
        long epoch = s.getEpoch();
        long ts = s.getTs();
        long deadline = book.leaseFrom(nowMs, s.getLeaseMs() > 0 ? s.getLeaseMs() : settings.provisionalLeaseMs());
        boolean stopped = s.getState() == io.flotilla.protocol.v1.WorkerState.WORKER_STATE_STOPPED;
        WorkerRecord r = book.get(id);
        if (r != null && (r.isRetired(epoch) || (r.epoch == epoch ? ts <= r.lastStatusTs : ts <= r.lastTs))) {
            counters.staleStatuses++;
            return Outcome.STALE;
        }
        if (r != null && r.epoch == epoch) {
            book.describe(r, s);
            r.lastStatusTs = ts;
            r.lastTs = Math.max(r.lastTs, ts);
            if (stopped) {
                book.stop(r, nowMs);
                return Outcome.APPLIED;
            }
            if (r.isCurrent()) {
                book.setDeadline(r, Math.max(r.leaseDeadlineMs, deadline));
                return Outcome.APPLIED;
            }
            // Revival: the lease ran out but the same process heartbeats again; its blocks were dropped.
            book.setDeadline(r, deadline);
            return Outcome.of(Verdict.APPLIED, book.requestReconcile(r, ReconcileRequest.Reason.REVIVED, nowMs));
        }
        r = book.adopt(r, id, epoch);
        book.describe(r, s);
        r.lastStatusTs = ts;
        r.lastTs = ts;
        book.setDeadline(r, deadline);
        if (stopped) {
            book.stop(r, nowMs);
        }
        return Outcome.APPLIED;
    }

    /**
     * One record from {@code flotilla.worker-load}: when its digest was taken at the cursor of a LIVE
     * worker and its count or XOR differ from the index's, the worker drifted silently.
     */
    public Outcome onLoad(WorkerLoad load, long nowMs) {
        book.expireDue(nowMs);
        WorkerRecord r = book.get(load.getWorkerId());
        if (r == null || r.epoch != load.getEpoch() || r.state != WorkerState.LIVE
                || !load.hasIndexDigest() || load.getIndexDigest().getKvSeq() != r.cursor) {
            return Outcome.IGNORED;
        }
        IndexDigest d = load.getIndexDigest();
        int slot = r.slot;
        if (agrees(slot, Tiers.DEVICE, d.getCount(), d.getXor()) && agrees(slot, Tiers.HOST, d.getHostCount(), d.getHostXor())
                && agrees(slot, Tiers.DISK, d.getDiskCount(), d.getDiskXor())) {
            return Outcome.APPLIED;
        }
        counters.driftDetected++;
        return Outcome.of(Verdict.APPLIED, book.requestReconcile(r, ReconcileRequest.Reason.DRIFT, nowMs));
    }

    private boolean agrees(int slot, int tier, long count, long xor) {
        return (slot < 0 ? 0 : index.countAt(slot, tier)) == count && (slot < 0 ? 0 : index.xorAt(slot, tier)) == xor;
    }

    /** The shell cannot read {@code flotilla.workers} since {@code sinceMs}: leases freeze from then on. */
    public void membershipFeedUnhealthy(long sinceMs) {
        book.feedUnhealthy(sinceMs);
    }

    /** The membership feed reads again: every current lease deadline moves by the outage length. */
    public void membershipFeedHealthy(long nowMs) {
        book.feedHealthyAgain(nowMs);
        book.expireDue(nowMs);
    }

    public boolean isMembershipFeedHealthy() {
        return book.feedHealthy();
    }

    /**
     * Periodic housekeeping: expires leases, re-asks unanswered reconciliations, forgets long-expired
     * workers. Returns the ids that expired now and the requests to send.
     */
    public TickResult tick(long nowMs) {
        List<String> expired = book.expireDue(nowMs);
        List<ReconcileRequest> again = new ArrayList<>();
        for (WorkerRecord r : book.all()) {
            if (r.state == WorkerState.UNVERIFIED && nowMs - r.reconcileRequestedAtMs >= settings.reconcileRetryMs()) {
                again.add(book.requestReconcile(r, ReconcileRequest.Reason.RETRY, nowMs));
            }
        }
        book.purgeExpired(nowMs);
        return new TickResult(expired, again);
    }

    /** What {@link #tick} did: workers expired now, and reconciliations to ask for (again). */
    public record TickResult(List<String> expired, List<ReconcileRequest> reconcile) {
    }

    // ------------------------------------------------------------------ read side (any thread)

    public PrefixIndex index() {
        return index;
    }

    /**
     * Matched leading blocks per worker, only for workers whose last status names this model and block
     * size (a worker not described by a status yet is not filtered): blocks of other namespaces are never
     * compared. Lock-free, like {@link PrefixIndex#findMatches}.
     */
    public List<WorkerMatch> findMatches(String model, int blockSize, long[] seqHashes) {
        List<WorkerMatch> all = index.findMatches(seqHashes);
        List<WorkerMatch> out = new ArrayList<>(all.size());
        for (WorkerMatch m : all) {
            if (book.serves(m.workerId(), model, blockSize)) {
                out.add(m);
            }
        }
        return out;
    }

    /** The endpoint of {@code workerId}'s WorkerService from its last status, or null. */
    public String endpointOf(String workerId) {
        return book.endpointOf(workerId);
    }

    public Optional<WorkerView> worker(String workerId) {
        WorkerRecord r = book.get(workerId);
        return r == null ? Optional.empty() : Optional.of(r.view(index));
    }

    /** Every worker the applier remembers, expired ones included until their retention ends. */
    public List<WorkerView> workers() {
        List<WorkerView> out = new ArrayList<>();
        for (WorkerRecord r : book.all()) {
            out.add(r.view(index));
        }
        return out;
    }

    public ApplierStats stats() {
        return counters.snapshot();
    }

    /** Index-clock time of the last applied batch or snapshot; MIN_VALUE before any. */
    public long lastAppliedAtMs() {
        return book.lastAppliedAtMs;
    }

    // ------------------------------------------------------------------ index snapshots (writer thread)

    /** Live and unverified workers with their blocks, for a periodic index snapshot. */
    public IndexSnapshot exportSnapshot(long nowMs) {
        return IndexSnapshots.export(book, nowMs);
    }

    /**
     * Loads {@code snapshot} into this empty applier. Restored workers get a provisional lease from
     * {@code nowMs} until their next WorkerStatus; workers exported while unverified come back
     * unverified, and their reconciliation requests are returned.
     */
    public List<ReconcileRequest> importSnapshot(IndexSnapshot snapshot, long nowMs) {
        return IndexSnapshots.restore(book, snapshot, nowMs);
    }
}
