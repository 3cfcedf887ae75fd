package io.flotilla.router.core;


import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Literal building blocks for router core tests. */
public final class Fixtures {

    public static final String MODEL = "m";
    public static final int BS = 16;

    /** prefill_ms(t) = 1e-4·t² + 0.1·t + 10; decode_ms(u) = 20·u + 5. Round numbers for hand-checked tables. */
    public static final WorkerTiming SIMPLE = new WorkerTiming(1e-4, 0.1, 10, 0, 20, 5, 1);

    /** The simulated engine's reference profile (worker-agent TimingModel.DEFAULT). */
    public static final WorkerTiming MOCKER = new WorkerTiming(4.209989e-7, 1.518344e-2, 16.50142, -25.74, 54.01, 5.74, 1);

    private Fixtures() {
    }

    public static WorkerView worker(String id) {
        return worker(id, WorkerView.Role.AGGREGATED);
    }

    public static WorkerView worker(String id, WorkerView.Role role) {
        return new WorkerView(id, role, MODEL, BS, "bf16/bs16/paged", id + ":7100", WorkerView.State.READY,
                true, Optional.of(SIMPLE), 1000, LoadReport.NONE);
    }

    public static WorkerView untimed(String id) {
        return new WorkerView(id, WorkerView.Role.AGGREGATED, MODEL, BS, "", id + ":7100",
                WorkerView.State.READY, true, Optional.empty(), 1000, LoadReport.NONE);
    }

    public static WorkerView withBlockSize(WorkerView w, int blockSize) {
        return new WorkerView(w.id(), w.role(), w.model(), blockSize, w.kvLayout(), w.endpoint(), w.state(),
                w.routable(), w.timing(), w.totalKvBlocks(), w.load());
    }

    public static WorkerView withModel(WorkerView w, String model) {
        return new WorkerView(w.id(), w.role(), model, w.blockSize(), w.kvLayout(), w.endpoint(), w.state(),
                w.routable(), w.timing(), w.totalKvBlocks(), w.load());
    }

    public static WorkerView withTiming(WorkerView w, WorkerTiming t, int totalKvBlocks) {
        return new WorkerView(w.id(), w.role(), w.model(), w.blockSize(), w.kvLayout(), w.endpoint(), w.state(),
                w.routable(), Optional.ofNullable(t), totalKvBlocks, w.load());
    }

    public static LoadReport load(int waiting, long waitingPrefillTokens, int activeKvBlocks) {
        return new LoadReport(0, waiting, waitingPrefillTokens, activeKvBlocks);
    }

    /** A seq-hash chain: {@code blocks} hashes derived from {@code prefix} (same prefix, same leading hashes). */
    public static long[] chain(long prefix, int blocks) {
        long[] out = new long[blocks];
        long h = prefix * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < blocks; i++) {
            h = mix(h + i);
            out[i] = h;
        }
        return out;
    }

    /** The chain of {@code base} continued by {@code extra} blocks unique to {@code suffixSeed}. */
    public static long[] extend(long[] base, long suffixSeed, int extra) {
        long[] out = java.util.Arrays.copyOf(base, base.length + extra);
        long h = base.length == 0 ? suffixSeed : base[base.length - 1];
        for (int i = 0; i < extra; i++) {
            h = mix(h ^ (suffixSeed * 0xBF58476D1CE4E5B9L + i));
            out[base.length + i] = h;
        }
        return out;
    }

    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    public static RoutingRequest request(String id, int isl, long[] hashes) {
        return new RoutingRequest(id, MODEL, isl, BS, hashes, Set.of(), false, 0);
    }

    public static RoutingRequest request(String id, int isl) {
        return request(id, isl, chain(id.hashCode(), isl / BS));
    }

    public static ClusterSnapshot snapshot(java.util.List<WorkerView> workers, Map<String, Integer> overlaps) {
        return new ClusterSnapshot(workers, overlaps, OverlapSource.INDEXER, Map.of());
    }
}
