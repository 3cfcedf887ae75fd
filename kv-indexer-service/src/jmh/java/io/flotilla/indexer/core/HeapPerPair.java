package io.flotilla.indexer.core;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Bytes of heap per resident (block, worker) pair, measured (not a JMH benchmark: JMH times code,
 * it does not weigh objects). For each structure: full GC, used heap, build it from the same 1 M
 * pairs, full GC, used heap again; the difference over the pair count. Run with a fixed heap and the
 * serial collector so {@code System.gc()} is a real full collection, e.g.
 * {@code java -Xms4g -Xmx4g -XX:+UseSerialGC -cp ... io.flotilla.indexer.core.HeapPerPair}; with the arguments
 * {@code WORKERS PAIRS} (e.g. {@code 1024 10000000}) it weighs {@link PrefixIndex} alone at that size.
 *
 * <p>Alternatives weighed against {@link PrefixIndex}: a boxed {@code HashMap<Long, Long>} of
 * seq_hash to worker mask (the same design without primitives), the naive reference model
 * ({@code HashMap<worker, HashSet<Long>>}), and a node-per-block tree keyed by seq_hash under the
 * parent (children in a {@code HashMap<Long, Node>}) plus the seq_hash lookup a Removed event needs.
 */
public final class HeapPerPair {

    /** A radix-style node: one per distinct block, children keyed by their seq_hash. */
    static final class Node {
        long workers;
        Map<Long, Node> children;
    }

    public static void main(String[] args) {
        if (args.length == 2) { // fleet size: the index alone (the alternatives would need several times the heap)
            int workers = Integer.parseInt(args[0]);
            long pairs = Long.parseLong(args[1]);
            for (String scenario : List.of("unique", "shared")) {
                List<long[]> holdings = IndexFixtures.holdings(scenario, workers, pairs);
                report(scenario, "PrefixIndex, " + workers + " workers", () -> prefixIndex(holdings),
                        (pairs / workers) * workers);
            }
            return;
        }
        // Just past a table doubling (789 K distinct blocks > 3/4 of 2^20 cells): the least dense point.
        List<long[]> edge = IndexFixtures.holdings("unique").stream()
                .map(b -> java.util.Arrays.copyOf(b, 12_330)).toList();
        report("edge", "PrefixIndex right after growing to 2^21 cells", () -> prefixIndex(edge), 64L * 12_330);
        for (String scenario : List.of("unique", "shared")) {
            List<long[]> holdings = IndexFixtures.holdings(scenario);
            report(scenario, "PrefixIndex (open addressing, worker bitsets)", () -> prefixIndex(holdings));
            report(scenario, "HashMap<Long, Long> seq_hash -> mask (boxed)", () -> {
                Map<Long, Long> map = new HashMap<>();
                for (int w = 0; w < holdings.size(); w++) {
                    long bit = 1L << w;
                    for (long h : holdings.get(w)) {
                        map.merge(h, bit, (a, b) -> a | b);
                    }
                }
                return map;
            });
            report(scenario, "HashMap<String, HashSet<Long>> (reference model)", () -> {
                Map<String, Set<Long>> map = new HashMap<>();
                for (int w = 0; w < holdings.size(); w++) {
                    Set<Long> set = map.computeIfAbsent(IndexFixtures.worker(w), k -> new HashSet<>());
                    for (long h : holdings.get(w)) {
                        set.add(h);
                    }
                }
                return map;
            });
            report(scenario, "node-per-block tree + seq_hash lookup (boxed)", () -> {
                Node root = new Node();
                Map<Long, Node> lookup = new HashMap<>();
                for (int w = 0; w < holdings.size(); w++) {
                    long[] blocks = holdings.get(w);
                    for (int i = 0; i < blocks.length; i++) {
                        // chains of 128: block i's parent is block i - 1 within the chain
                        Node parent = i % IndexFixtures.CHAIN == 0 ? root : lookup.get(blocks[i - 1]);
                        Node node = lookup.get(blocks[i]);
                        if (node == null) {
                            node = new Node();
                            lookup.put(blocks[i], node);
                            if (parent.children == null) {
                                parent.children = new HashMap<>(4);
                            }
                            parent.children.put(blocks[i], node);
                        }
                        node.workers |= 1L << w;
                    }
                }
                return new Object[]{root, lookup};
            });
        }
    }

    /** An unsized {@link PrefixIndex} grown to hold {@code holdings} (worker w holds the blocks at index w). */
    private static PrefixIndex prefixIndex(List<long[]> holdings) {
        PrefixIndex index = new PrefixIndex();
        for (int w = 0; w < holdings.size(); w++) {
            for (long h : holdings.get(w)) {
                index.store(IndexFixtures.worker(w), h);
            }
        }
        return index;
    }

    private static void report(String scenario, String structure, Supplier<Object> build) {
        report(scenario, structure, build, IndexFixtures.PAIRS);
    }

    private static void report(String scenario, String structure, Supplier<Object> build, long pairs) {
        long before = usedAfterGc();
        Object built = build.get();
        long after = usedAfterGc();
        double perPair = (double) (after - before) / pairs;
        System.out.printf("%-7s %-50s %8.1f MiB  %6.1f bytes/pair%n", scenario, structure,
                (after - before) / 1048576.0, perPair);
        java.lang.ref.Reference.reachabilityFence(built);
    }

    private static long usedAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }
}
