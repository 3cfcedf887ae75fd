package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.WorkerStatus;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Deterministic simulation of a few workers feeding one {@link KvEventApplier} and one
 * {@link ReferenceIndexer} the same inputs: engine steps (stores, removes, clears), lost and
 * duplicated batches, redelivered old batches, offloads to host memory and disk and evictions and
 * clears there, heartbeats, restarts with new random epochs, stops,
 * silent deaths, load digests, silent drift, snapshot answers, membership outages, and time.
 *
 * <p>After every action it checks: identical outcomes, worker views, block sets, digests, counters
 * and FindMatches answers; the truth oracle (a LIVE, caught-up, undrifted worker's set equals what
 * the engine really holds); and the named invariants
 * <ul>
 *   <li>"an index never reports a block for a worker after its lease expired (while the feed is
 *       healthy)", as of the applier's latest input (checked when workers register before
 *       publishing events);</li>
 *   <li>"a membership outage never expires anyone".</li>
 * </ul>
 */
final class IndexSimulation {

    /** One generated action: {@code dice} picks the kind, the rest are its parameters. */
    record Action(int dice, int worker, int a, int b) {
    }

    static final int WORKERS = 4;
    static final int LEASE_MS = 1000;
    static final long[][] DOCS = new long[4][8];
    static final List<long[]> QUERIES = new ArrayList<>();

    static {
        for (int d = 0; d < DOCS.length; d++) {
            for (int i = 0; i < DOCS[d].length; i++) {
                DOCS[d][i] = mix(d * 100L + i + 1);
            }
        }
        DOCS[0][0] = 0;       // the hash 0 is an ordinary key
        DOCS[1][0] = -1L;     // and so is the unsigned maximum
        QUERIES.addAll(Arrays.asList(DOCS));
        long[] mixed = Arrays.copyOf(DOCS[2], 8);
        System.arraycopy(DOCS[3], 0, mixed, 3, 5);
        QUERIES.add(mixed);
    }

    private static final class SimWorker {
        final String id;
        long epoch;
        long seq;
        int restarts;
        boolean alive;
        boolean registered;
        boolean drifted;
        long lastHeartbeat = Long.MIN_VALUE;
        final Set<Long> resident = new LinkedHashSet<>();
        final Set<Long> host = new LinkedHashSet<>();
        final Set<Long> disk = new LinkedHashSet<>();

        List<Set<Long>> tiers() {
            return List.of(resident, host, disk);
        }
        final List<KvEventBatch> delivered = new ArrayList<>();
        final List<WorkerStatus> statuses = new ArrayList<>();

        /**
         * This worker's host clock minus the indexer's: -10 s, 0 or +10 s. Timestamps it writes carry it;
         * leases must not care (they run on the indexer's receive clock).
         */
        final long skewMs;

        SimWorker(int i) {
            skewMs = (i % 3 - 1) * 10_000L;
            id = "w" + i;
        }
    }

    private final KvEventApplier sut;
    private final ReferenceIndexer ref;
    private final boolean registerFirst;
    private final SimWorker[] sim = new SimWorker[WORKERS];
    private final Map<String, ReconcileRequest> pending = new LinkedHashMap<>();
    private final List<String> trace = new ArrayList<>();
    private long now = 10_000;
    private boolean feedHealthy = true;
    private long healthySince = Long.MIN_VALUE;
    private long expiriesAtOutage;
    /** Clock of the last input the applier saw: the lease invariant holds as of that instant. */
    private long lastInputAt = Long.MIN_VALUE;
    private int expiredLeaseChecks;

    /**
     * @param registerFirst a worker's WorkerStatus is delivered before its first batch of an epoch
     *                      (restarts wait while the membership feed is down); enables the lease invariant
     */
    IndexSimulation(PrefixIndex index, ApplierSettings settings, boolean registerFirst) {
        this.sut = new KvEventApplier(index, settings);
        this.ref = new ReferenceIndexer(settings);
        this.registerFirst = registerFirst;
        for (int i = 0; i < WORKERS; i++) {
            sim[i] = new SimWorker(i);
        }
        for (int i = 0; i < WORKERS; i++) {
            restart(sim[i], i % 2 == 0); // without registerFirst, odd workers start with events only
        }
    }

    void run(List<Action> actions) {
        for (Action a : actions) {
            now++;
            step(a);
            try {
                check();
            } catch (AssertionError e) {
                throw new AssertionError("after " + trace.size() + " actions:\n" + String.join("\n", trace), e);
            }
        }
    }

    /** The applier's counters at the end of the run (to report what a script exercised). */
    ApplierStats stats() {
        return sut.stats();
    }

    /** How often the lease invariant had an expired lease to check. */
    int expiredLeaseChecks() {
        return expiredLeaseChecks;
    }

    private void step(Action a) {
        SimWorker w = sim[a.worker() % WORKERS];
        int d = a.dice();
        if (d < 30) {
            engineStep(w, a.a(), a.b());
        } else if (d < 40) {
            if (a.b() % 3 == 0 && !w.statuses.isEmpty() && feedHealthy) {
                WorkerStatus old = w.statuses.get(a.a() % w.statuses.size());
                note("redeliver status %s e%x ts %d", w.id, old.getEpoch(), old.getTs());
                same(sut.onStatus(old, now), ref.onStatus(old, now));
            } else if (!w.delivered.isEmpty()) {
                KvEventBatch old = w.delivered.get(a.a() % w.delivered.size());
                note("redeliver %s e%x seq %d", w.id, old.getEpoch(), old.getSeq());
                deliver(old);
            }
        } else if (d < 53) {
            if (w.alive && feedHealthy) {
                heartbeat(w);
            }
        } else if (d < 65) {
            now += a.a() % 700;
            note("advance to %d", now);
            tick();
        } else if (d < 70) {
            restart(w, a.b() % 2 == 0);
        } else if (d < 72) {
            if (w.alive && feedHealthy) {
                note("stop %s", w.id);
                w.alive = false;
                same(sut.onStatus(KvInputs.stopped(w.id, w.epoch, now + w.skewMs), now), ref.onStatus(KvInputs.stopped(w.id, w.epoch, now + w.skewMs), now));
            }
        } else if (d < 74) {
            note("kill %s", w.id);
            w.alive = false;
        } else if (d < 82) {
            if (w.alive) {
                long[] counts = new long[3];
                long[] xors = new long[3];
                for (int t = 0; t < 3; t++) {
                    counts[t] = w.tiers().get(t).size();
                    xors[t] = xor(w.tiers().get(t));
                }
                note("load %s counts %s seq %d", w.id, Arrays.toString(counts), w.seq);
                var load = KvInputs.load(w.id, w.epoch, w.seq, counts, xors);
                same(sut.onLoad(load, now), ref.onLoad(load, now));
            }
        } else if (d < 85) {
            if (w.alive && !w.resident.isEmpty()) {
                Long lost = w.resident.iterator().next();
                note("drift %s loses %x silently", w.id, lost);
                w.resident.remove(lost);
                w.drifted = true;
            }
        } else if (d < 96) {
            answerReconciles();
        } else if (d < 98) {
            if (feedHealthy) {
                note("membership feed down");
                feedHealthy = false;
                expiriesAtOutage = sut.stats().leaseExpiries();
                sut.membershipFeedUnhealthy(now);
                ref.feedDown(now);
            }
        } else if (!feedHealthy) {
            note("membership feed up");
            feedHealthy = true;
            healthySince = now;
            lastInputAt = now;
            sut.membershipFeedHealthy(now);
            ref.feedUp(now);
        }
    }

    private void engineStep(SimWorker w, int a, int b) {
        if (!w.alive || (registerFirst && !w.registered)) {
            return;
        }
        List<KvEvent> events = new ArrayList<>();
        if (b % 10 == 9) {
            w.resident.clear();
            w.host.clear();
            w.disk.clear();
            events.add(KvInputs.cleared());
        }
        lowerTierStep(w, a, b, events);
        List<Long> held = new ArrayList<>(w.resident);
        int removals = held.isEmpty() ? 0 : a % 3;
        List<Long> gone = new ArrayList<>();
        for (int j = 0; j < removals; j++) {
            Long h = held.get((a + 7 * j) % held.size());
            if (w.resident.remove(h)) {
                gone.add(h);
            }
        }
        if (!gone.isEmpty()) {
            events.add(KvInputs.removed(gone.stream().mapToLong(Long::longValue).toArray()));
        }
        long[] doc = DOCS[(a / 3) % DOCS.length];
        int len = 1 + (b / 10) % doc.length;
        List<Long> fresh = new ArrayList<>();
        for (int i = 0; i < len; i++) {
            if (w.resident.add(doc[i])) {
                fresh.add(doc[i]);
            }
        }
        if (!fresh.isEmpty()) {
            events.add(KvInputs.stored(fresh.stream().mapToLong(Long::longValue).toArray()));
        }
        w.seq++;
        KvEventBatch batch = KvInputs.batch(w.id, w.epoch, w.seq, now + w.skewMs, events.toArray(KvEvent[]::new));
        int mode = b % 10;
        if (mode == 7) {
            note("%s seq %d lost", w.id, w.seq);
            return;
        }
        note("%s seq %d: %d events", w.id, w.seq, events.size());
        deliver(batch);
        if (mode == 8) {
            note("%s seq %d delivered twice", w.id, w.seq);
            deliver(batch);
        }
    }

    /** Offloads to host memory, host victims to disk, disk evictions and tier clears, as a KVBM does. */
    private void lowerTierStep(SimWorker w, int a, int b, List<KvEvent> events) {
        switch ((a / 7 + b / 13) % 6) {
            case 1, 2 -> {
                List<Long> copies = new ArrayList<>();
                for (Long h : w.resident) {
                    if (copies.size() < 1 + a % 3 && w.host.add(h)) {
                        copies.add(h);
                    }
                }
                if (!copies.isEmpty()) {
                    events.add(KvInputs.stored(KvTier.KV_TIER_HOST, toArray(copies)));
                }
            }
            case 3 -> {
                if (!w.host.isEmpty()) {
                    Long victim = w.host.iterator().next();
                    w.host.remove(victim);
                    events.add(KvInputs.removed(KvTier.KV_TIER_HOST, victim));
                    if (w.disk.add(victim)) {
                        events.add(KvInputs.stored(KvTier.KV_TIER_DISK, victim));
                    }
                }
            }
            case 4 -> {
                if (!w.disk.isEmpty()) {
                    Long gone = w.disk.iterator().next();
                    w.disk.remove(gone);
                    events.add(KvInputs.removed(KvTier.KV_TIER_DISK, gone));
                }
            }
            case 5 -> {
                if (b % 10 == 5) {
                    KvTier t = a % 2 == 0 ? KvTier.KV_TIER_HOST : KvTier.KV_TIER_DISK;
                    (t == KvTier.KV_TIER_HOST ? w.host : w.disk).clear();
                    events.add(KvInputs.cleared(t));
                }
            }
            default -> { }
        }
    }

    private static long[] toArray(List<Long> hashes) {
        return hashes.stream().mapToLong(Long::longValue).toArray();
    }

    private static long xor(Set<Long> hashes) {
        return hashes.stream().mapToLong(Long::longValue).reduce(0, (x, y) -> x ^ y);
    }

    private void deliver(KvEventBatch batch) {
        sim[Integer.parseInt(batch.getWorkerId().substring(1))].delivered.add(batch);
        same(sut.onBatch(batch, now), ref.onBatch(batch, now));
    }

    private void heartbeat(SimWorker w) {
        note("heartbeat %s e%x", w.id, w.epoch);
        var status = KvInputs.ready(w.id, w.epoch, now + w.skewMs, LEASE_MS);
        w.statuses.add(status);
        same(sut.onStatus(status, now), ref.onStatus(status, now));
        w.lastHeartbeat = now;
        w.registered = true;
    }

    private void restart(SimWorker w, boolean registerNow) {
        if (registerFirst && !feedHealthy) {
            return;
        }
        w.restarts++;
        w.epoch = mix(w.id.hashCode() * 31L + w.restarts);
        w.seq = 0;
        w.alive = true;
        w.registered = false;
        w.drifted = false;
        w.lastHeartbeat = Long.MIN_VALUE;
        w.resident.clear();
        w.host.clear();
        w.disk.clear();
        note("restart %s as e%x", w.id, w.epoch);
        if (registerFirst || (registerNow && feedHealthy)) {
            heartbeat(w);
        }
    }

    private void tick() {
        lastInputAt = now;
        KvEventApplier.TickResult t = sut.tick(now);
        List<ReconcileRequest> retries = ref.tick(now);
        assertThat(t.reconcile()).containsExactlyInAnyOrderElementsOf(retries);
        t.reconcile().forEach(r -> pending.put(r.workerId(), r));
    }

    private void answerReconciles() {
        for (ReconcileRequest r : List.copyOf(pending.values())) {
            pending.remove(r.workerId());
            SimWorker w = sim[Integer.parseInt(r.workerId().substring(1))];
            if (!w.alive) {
                note("snapshot request to %s failed", w.id);
                continue;
            }
            var snap = KvInputs.snapshot(w.id, w.epoch, w.seq, w.resident, w.host, w.disk);
            note("snapshot %s e%x seq %d (%d+%d+%d blocks)", w.id, w.epoch, w.seq, w.resident.size(), w.host.size(),
                    w.disk.size());
            Outcome o = sut.onSnapshot(snap, now);
            same(o, ref.onSnapshot(snap, now));
            if (o.verdict() == Verdict.APPLIED) {
                w.drifted = false;
            }
        }
    }

    private void same(Outcome actual, Outcome expected) {
        trace.set(trace.size() - 1, trace.get(trace.size() - 1) + " -> " + actual.verdict()
                + actual.reconcile().map(r -> " reconcile " + r.reason()).orElse(""));
        lastInputAt = now;
        assertThat(actual).as("outcome").isEqualTo(expected);
        actual.reconcile().ifPresent(r -> pending.put(r.workerId(), r));
    }

    private void check() {
        PrefixIndex index = sut.index();
        Set<String> ids = new HashSet<>(ref.workers.keySet());
        sut.workers().forEach(v -> ids.add(v.workerId()));
        long pairs = 0;
        for (String id : ids) {
            WorkerView v = sut.worker(id).orElse(null);
            ReferenceIndexer.Worker m = ref.workers.get(id);
            assertThat(v).as("worker %s known to both", id).isNotNull();
            assertThat(m).as("worker %s known to both", id).isNotNull();
            assertThat(v.state()).as("state of %s", id).isEqualTo(m.state);
            assertThat(v.epoch()).as("epoch of %s", id).isEqualTo(m.epoch);
            assertThat(v.lastSeq()).as("cursor of %s", id).isEqualTo(m.cursor);
            for (int t = 0; t < 3; t++) {
                assertThat(blocksOf(index, id, t)).as("tier %d blocks of %s", t, id).isEqualTo(m.tiers.get(t));
                assertThat(index.blockCount(id, t)).as("tier %d count of %s", t, id).isEqualTo(m.tiers.get(t).size());
                assertThat(index.xorDigest(id, t)).as("tier %d xor of %s", t, id).isEqualTo(xor(m.tiers.get(t)));
            }
            assertThat(v.blocks()).as("count of %s", id).isEqualTo(m.blocks.size());
            pairs += m.blocks.size();
        }
        assertThat(index.residentPairs()).as("resident pairs").isEqualTo(pairs);
        for (long[] q : QUERIES) {
            Map<String, WorkerMatch> got = new HashMap<>();
            index.findMatches(q).forEach(m -> got.put(m.workerId(), m));
            assertThat(got).as("matches for %s", Arrays.toString(q)).isEqualTo(ref.matches(q));
        }
        checkCounters();
        checkTruthAndInvariants();
    }

    private void checkCounters() {
        ApplierStats s = sut.stats();
        assertThat(new long[]{s.batchesApplied(), s.duplicates(), s.gaps(), s.staleBatches(), s.staleStatuses(),
                s.staleSnapshots(), s.reconciliationsRequested(), s.reconciliationsApplied(), s.driftDetected(),
                s.leaseExpiries(), s.stopped(), s.epochChanges()})
                .as("applied, duplicates, gaps, stale b/st/sn, requested, reconciled, drift, expiries, stopped, epochs")
                .containsExactly(ref.applied, ref.duplicates, ref.gaps, ref.staleBatches, ref.staleStatuses,
                        ref.staleSnapshots, ref.requested, ref.reconciled, ref.drift, ref.expiries, ref.stopped,
                        ref.epochChanges);
    }

    private void checkTruthAndInvariants() {
        PrefixIndex index = sut.index();
        for (SimWorker w : sim) {
            WorkerView v = sut.worker(w.id).orElse(null);
            if (v != null && w.alive && !w.drifted && v.state() == WorkerState.LIVE && v.epoch() == w.epoch
                    && v.lastSeq() == w.seq) {
                for (int t = 0; t < 3; t++) {
                    assertThat(blocksOf(index, w.id, t)).as("truth: %s caught up at seq %d holds in tier %d what its "
                            + "engine holds", w.id, w.seq, t).isEqualTo(w.tiers().get(t));
                }
            }
            boolean leaseOver = registerFirst && feedHealthy && w.lastHeartbeat != Long.MIN_VALUE
                    && w.lastHeartbeat >= healthySince && lastInputAt > w.lastHeartbeat + LEASE_MS;
            if (leaseOver) {
                expiredLeaseChecks++;
                for (int t = 0; t < 3; t++) {
                    assertThat(index.blocksOf(w.id, t)).as("invariant: no block for %s in tier %d after its lease expired "
                            + "(input at %d, heartbeat %d, %s)", w.id, t, lastInputAt, w.lastHeartbeat, sut.worker(w.id)).isEmpty();
                }
                for (long[] q : QUERIES) {
                    assertThat(index.findMatches(q)).as("invariant: %s not matched after its lease expired", w.id)
                            .noneMatch(m -> m.workerId().equals(w.id));
                }
            }
        }
        if (!feedHealthy) {
            assertThat(sut.stats().leaseExpiries()).as("invariant: a membership outage expires nobody")
                    .isEqualTo(expiriesAtOutage);
        }
    }

    private static Set<Long> blocksOf(PrefixIndex index, String id, int tier) {
        Set<Long> held = new HashSet<>();
        for (long h : index.blocksOf(id, tier)) {
            held.add(h);
        }
        return held;
    }

    private void note(String format, Object... args) {
        trace.add(String.format(format, args));
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
