package io.flotilla.router.booking;

import io.flotilla.router.core.ActiveLoad;
import io.flotilla.router.core.ClusterSnapshot;
import io.flotilla.router.core.Decision;
import io.flotilla.router.core.KvOverlap;
import io.flotilla.router.core.OverlapSource;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.RoutingRequest;
import io.flotilla.router.core.Signal;
import io.flotilla.router.core.WorkerView;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The one place where routing decisions become router state: active-sequence bookings and the
 * approximate prefix index. {@link RoutingPolicy} only reads what this ledger exposes (through a
 * {@link ClusterSnapshot}); everything that changes router state goes through here.
 *
 * <p>The shell's request path:
 * <pre>
 * RoutingRequest r = ProtoMapping.request(route);
 * Map&lt;String,KvOverlap&gt; matches = policy.requires().contains(KV_OVERLAP) ? indexer.findMatches(r) : null;  // null: failed/slow
 * ClusterSnapshot s = ledger.snapshotOfTiers(workers, r, policy.requires(), matches, clock.instant());
 * Decision d = policy.decide(r, s);
 * ledger.book(r, d, clock.instant()).ifPresent(sync::publish);
 * ... MarkPrefillDone → sync.publish(ledger.prefillDone(id, now)); Release → sync.publish(ledger.release(id, now))
 * ... every record consumed from flotilla.router-sync → ledger.applyRemote(change, now)
 * ... every WorkerLoad consumed → store it in the worker's view, then ledger.loadReported(workerId)
 * ... every few seconds → ledger.expire(now)
 * </pre>
 */
public final class BookingLedger {

    private final ActiveSequences sequences;
    private final ApproxIndex approx;
    private final LoadRanking ranking;

    public BookingLedger(ActiveSequences sequences, ApproxIndex approx, LoadRanking ranking) {
        this.sequences = sequences;
        this.approx = approx;
        this.ranking = ranking;
        sequences.onChange(id -> ranking.loadsChanged(id, sequences.load(id), sequences.loadAtReport(id)));
    }

    /** A ledger for replica {@code routerId} (unique per process start) configured from {@code config}. */
    public static BookingLedger create(String routerId, RouterConfig config) {
        return new BookingLedger(new ActiveSequences(routerId, config.sequenceTtl()), ApproxIndex.of(config.approx()),
                new LoadRanking(config));
    }

    /**
     * A worker's view changed (membership, load report, suspect flag), or it left ({@code view} null): the
     * shell's membership directory tells the ledger, which re-ranks it with its bookings.
     */
    public void workerChanged(String workerId, WorkerView view) {
        if (view == null) {
            ranking.remove(workerId);
        } else {
            ranking.put(view, sequences::load, sequences::loadAtReport);
        }
    }

    /**
     * Assembles the snapshot for one decision. Overlap comes from {@code indexerMatches} when given
     * (source INDEXER), else from the approximate index (APPROX); none is looked up when the policy
     * does not require {@link Signal#KV_OVERLAP} (NONE).
     *
     * @param indexerMatches the indexer's per-worker matched blocks, or null when it failed, timed out
     *                       or was too stale to trust
     */
    public ClusterSnapshot snapshot(List<WorkerView> workers, RoutingRequest request, Set<Signal> required,
                                    Map<String, Integer> indexerMatches, Instant now) {
        Map<String, KvOverlap> tiered = null;
        if (indexerMatches != null) {
            tiered = new java.util.HashMap<>();
            for (Map.Entry<String, Integer> e : indexerMatches.entrySet()) {
                tiered.put(e.getKey(), KvOverlap.deviceOnly(e.getValue()));
            }
        }
        return snapshotOfTiers(workers, request, required, tiered, now);
    }

    /**
     * As {@link #snapshot}, with the indexer's per-tier answer: each worker's device prefix and its
     * any-tier prefix by best tier.
     */
    public ClusterSnapshot snapshotOfTiers(List<WorkerView> workers, RoutingRequest request, Set<Signal> required,
                                           Map<String, KvOverlap> indexerMatches, Instant now) {
        if (!required.contains(Signal.KV_OVERLAP)) {
            return loadSnapshot(workers);
        }
        Map<String, ActiveLoad> loads = sequences.loads();
        Map<String, ActiveLoad> atReport = sequences.loadsAtReport();
        if (indexerMatches != null) {
            return ClusterSnapshot.ofTiers(workers, indexerMatches, OverlapSource.INDEXER, loads, atReport)
                    .withRanking(ranking);
        }
        return new ClusterSnapshot(workers, approx.overlaps(request.seqHashes(), now), OverlapSource.APPROX, loads,
                atReport, Map.of(), ranking);
    }

    /** The approximate index's overlap per worker for a prompt (what a decision without the indexer's answer uses). */
    public Map<String, Integer> approximateOverlaps(long[] seqHashes, Instant now) {
        return approx.overlaps(seqHashes, now);
    }

    /** The load view every decision starts from, without overlap (capacity views, status, load-only decisions). */
    public ClusterSnapshot loadSnapshot(List<WorkerView> workers) {
        return new ClusterSnapshot(workers, Map.of(), OverlapSource.NONE, sequences.loads(), sequences.loadsAtReport(),
                Map.of(), ranking);
    }

    /** The aggregated workers by load, as every snapshot this ledger builds carries them. */
    public LoadRanking ranking() {
        return ranking;
    }

    /**
     * Books a routed decision: its prefill tokens on the prefilling worker, its blocks on the decode
     * worker, and its prefix in the approximate index for every worker that will hold the KV. Returns
     * the change to publish; empty for BUSY / NO_WORKER decisions (nothing is booked).
     */
    public Optional<SequenceChange.Added> book(RoutingRequest request, Decision decision, Instant now) {
        if (!decision.routed()) {
            return Optional.empty();
        }
        SequenceChange.Added change = sequences.add(request.requestId(), decision.workerId(),
                decision.prefillWorkerId(), decision.newPrefillTokens(), decision.newDecodeBlocks(),
                request.seqHashes(), now);
        learn(change, now);
        return Optional.of(change);
    }

    public SequenceChange.PrefillDone prefillDone(String requestId, Instant now) {
        return sequences.markPrefillDone(requestId, now);
    }

    public SequenceChange.Freed release(String requestId, Instant now) {
        return sequences.free(requestId, now);
    }

    /** Applies a peer replica's change; own echoes and stale changes are ignored (returns false). */
    public boolean applyRemote(SequenceChange change, Instant now) {
        boolean applied = sequences.apply(change, now);
        if (applied && change instanceof SequenceChange.Added a) {
            learn(a, now);
        }
        return applied;
    }

    /**
     * A load report from {@code workerId} arrived (the shell stores it in the worker's {@link WorkerView}
     * and calls this in the same step): bookings up to now are assumed to be in it.
     *
     * @return true when the worker's booked load at its report moved (the capacity a Route meets may have changed)
     */
    public boolean loadReported(String workerId) {
        return sequences.reported(workerId);
    }

    /** Drops stale bookings and approximate-index entries. */
    public void expire(Instant now) {
        sequences.expire(now);
        approx.expire(now);
    }

    /** A worker stopped or restarted with a new epoch: whatever the router guessed it cached is gone. */
    public void forgetWorker(String workerId) {
        approx.forgetWorker(workerId);
        sequences.forgetWorker(workerId);
    }

    public ActiveSequences sequences() {
        return sequences;
    }

    public ApproxIndex approx() {
        return approx;
    }

    private void learn(SequenceChange.Added a, Instant now) {
        approx.record(a.seqHashes(), a.workerId(), now);
        if (!a.prefillWorkerId().isEmpty()) {
            approx.record(a.seqHashes(), a.prefillWorkerId(), now);
        }
    }
}
