package io.flotilla.router.client;

import io.flotilla.protocol.kafka.WorkerPartitions;
import io.flotilla.router.core.KvOverlap;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

/**
 * Asks every indexer shard at once and merges their answers. Each shard has its own client, so its own adaptive
 * deadline and breaker: a slow shard does not move the others' deadlines. A shard answers for the workers of its
 * kv-events partitions only, and says which; the merge is the union of the answers (shards hold disjoint workers),
 * and the workers of partitions no answering shard covers (a shard that missed its deadline, or one in the middle of
 * a rebalance) are priced from the router's approximate index, as every worker is when no shard answers. A shard's
 * miss therefore costs only its own workers' precision, and is counted in
 * {@code flotilla_router_indexer_shard_misses_total{shard}}.
 */
public final class ShardedIndexer implements KvMatches {

    /** The router's approximate overlap per worker for a prompt (its booking ledger's approximate index). */
    @FunctionalInterface
    public interface Approximation {
        Map<String, Integer> overlaps(long[] seqHashes);
    }

    private final List<IndexerClient> shards;
    private final List<Counter> misses;
    private final Approximation approx;

    public ShardedIndexer(List<IndexerClient> shards, Approximation approx, MeterRegistry registry) {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("no indexer shard to ask");
        }
        this.shards = List.copyOf(shards);
        this.approx = approx;
        this.misses = new ArrayList<>();
        for (IndexerClient c : shards) {
            misses.add(Counter.builder("flotilla.router.indexer.shard_misses")
                    .description("FindMatches calls this indexer shard did not answer in time (its workers priced from the approximate index)")
                    .tag("shard", c.address()).register(registry));
        }
    }

    @Override
    public void findMatches(String model, int blockSize, long[] seqHashes, long prefillNanos,
                            Consumer<Optional<Map<String, KvOverlap>>> done) {
        int n = shards.size();
        AtomicReferenceArray<Optional<IndexerClient.Answer>> answers = new AtomicReferenceArray<>(n);
        AtomicInteger left = new AtomicInteger(n);
        for (int i = 0; i < n; i++) {
            int shard = i;
            shards.get(i).ask(model, blockSize, seqHashes, prefillNanos, answer -> {
                answers.set(shard, answer);
                if (answer.isEmpty()) {
                    misses.get(shard).increment();
                }
                if (left.decrementAndGet() == 0) {
                    List<Optional<IndexerClient.Answer>> all = new ArrayList<>(n);
                    for (int j = 0; j < n; j++) {
                        all.add(answers.get(j));
                    }
                    done.accept(merge(all, () -> approx.overlaps(seqHashes)));
                }
            });
        }
    }

    /**
     * The shards' answers as one: empty when none answered; else the union of the answers, plus, for the workers of
     * partitions no answer covers, their approximate overlap (device tier). A worker two answers name (both shards
     * claimed its partition for a moment of a rebalance) keeps the longer prefix.
     */
    static Optional<Map<String, KvOverlap>> merge(List<Optional<IndexerClient.Answer>> answers,
                                                  java.util.function.Supplier<Map<String, Integer>> approx) {
        Map<String, KvOverlap> merged = new HashMap<>();
        Set<Integer> covered = new HashSet<>();
        int count = 0;
        boolean any = false;
        boolean all = false;
        for (Optional<IndexerClient.Answer> a : answers) {
            if (a.isEmpty()) {
                continue;
            }
            any = true;
            IndexerClient.Answer answer = a.get();
            answer.matches().forEach((w, o) -> merged.merge(w, o, (x, y) -> x.anyTier() >= y.anyTier() ? x : y));
            if (answer.coversEveryWorker()) {
                all = true;
            } else {
                covered.addAll(answer.partitions());
                count = Math.max(count, answer.partitionCount());
            }
        }
        if (!any) {
            return Optional.empty();
        }
        if (!all && covered.size() < count) {
            for (Map.Entry<String, Integer> e : approx.get().entrySet()) {
                if (!covered.contains(WorkerPartitions.of(e.getKey(), count)) && !merged.containsKey(e.getKey())) {
                    merged.put(e.getKey(), KvOverlap.deviceOnly(e.getValue()));
                }
            }
        }
        return Optional.of(merged);
    }

    public List<IndexerClient> shards() {
        return shards;
    }

    /** Calls each shard missed, in shard order. */
    public List<Long> misses() {
        return misses.stream().map(c -> (long) c.count()).toList();
    }
}
