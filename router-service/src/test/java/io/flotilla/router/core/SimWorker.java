package io.flotilla.router.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A simulated engine: one prefill lane (FIFO; a request's prefill takes prefill_ms(uncached tokens),
 * its cached prefix found in the worker's real LRU block cache when the prefill starts) and an
 * unbounded decode batch (a request decodes for osl · decode_ms(KV usage at its start)). After prefill
 * the prompt's blocks are cached; the indexer sees them at once.
 */
final class SimWorker {

    record Job(SimCluster.Arrival arrival, Decision decision, SimCluster.Replica replica) {
        RoutingRequest request() {
            return arrival.request();
        }
    }

    final String id;
    private final SimCluster cluster;
    private final WorkerTiming timing;
    private final int capacityBlocks;
    private final LinkedHashMap<Long, Boolean> cache = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
            return size() > capacityBlocks;
        }
    };
    private final ArrayDeque<Job> queue = new ArrayDeque<>();
    private final List<Job> decoding = new ArrayList<>();
    private Job prefilling;
    private long prefillingFresh;
    /** Prompt blocks referenced by requests in the worker (shared prefixes count once), and output blocks. */
    private final Map<Long, Integer> referenced = new java.util.HashMap<>();
    private long outputBlocks;
    long prefilledTokens;
    long servedRequests;

    SimWorker(SimCluster cluster, String id, WorkerTiming timing, int capacityBlocks) {
        this.cluster = cluster;
        this.id = id;
        this.timing = timing;
        this.capacityBlocks = capacityBlocks;
    }

    void accept(Job job) {
        queue.add(job);
        startPrefill();
    }

    int inFlight() {
        return queue.size() + (prefilling == null ? 0 : 1) + decoding.size();
    }

    /** Leading blocks of {@code hashes} in the cache, without touching LRU order (what the indexer sees). */
    int leadingMatch(long[] hashes) {
        int n = 0;
        while (n < hashes.length && cache.containsKey(hashes[n])) {
            n++;
        }
        return n;
    }

    /** Leading blocks of {@code hashes} in the cache, marking them used (what a prefill reuses). */
    private int reuse(long[] hashes) {
        int n = 0;
        while (n < hashes.length && cache.get(hashes[n]) != null) {
            n++;
        }
        return n;
    }

    LoadReport report() {
        long waitingTokens = 0;
        for (Job j : queue) {
            waitingTokens += j.request().islTokens() - j.request().cachedTokens(leadingMatch(j.request().seqHashes()));
        }
        waitingTokens += prefillingFresh;
        return new LoadReport(decoding.size(), queue.size(), waitingTokens, activeBlocks());
    }

    int activeBlocks() {
        return referenced.size() + (int) outputBlocks;
    }

    private void startPrefill() {
        if (prefilling != null || queue.isEmpty()) {
            return;
        }
        Job j = queue.poll();
        prefilling = j;
        RoutingRequest r = j.request();
        int cached = r.cachedTokens(reuse(r.seqHashes()));
        int fresh = r.islTokens() - cached;
        prefilledTokens += fresh;
        prefillingFresh = fresh;
        for (long h : r.seqHashes()) {
            referenced.merge(h, 1, Integer::sum);
        }
        outputBlocks += outputBlocks(r);
        long duration = Math.max(1, Math.round(timing.prefillMs(fresh)));
        cluster.at(cluster.now() + duration, () -> finishPrefill(j, cached));
    }

    private void finishPrefill(Job j, int cached) {
        RoutingRequest r = j.request();
        for (long h : r.seqHashes()) {
            cache.put(h, Boolean.TRUE);
        }
        prefilling = null;
        prefillingFresh = 0;
        j.replica().prefillDone(r.requestId());
        long firstToken = cluster.now();
        decoding.add(j);
        double usage = capacityBlocks == 0 ? 0 : Math.min(1.0, (double) activeBlocks() / capacityBlocks);
        long duration = Math.max(1, Math.round(r.oslHint() * timing.decodeMs(usage)));
        cluster.at(cluster.now() + duration, () -> finish(j, cached, firstToken));
        startPrefill();
    }

    private void finish(Job j, int cached, long firstToken) {
        decoding.remove(j);
        for (long h : j.request().seqHashes()) {
            referenced.computeIfPresent(h, (k, n) -> n == 1 ? null : n - 1);
        }
        outputBlocks -= outputBlocks(j.request());
        servedRequests++;
        j.replica().release(j.request().requestId());
        cluster.finished(new SimCluster.Outcome(j.arrival(), j.decision(), id, cached, firstToken, cluster.now()));
    }

    private static int outputBlocks(RoutingRequest r) {
        return r.bookedBlocks() - r.seqHashes().length;
    }
}
