package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything {@link RoutingPolicy#decide} may look at for one request, gathered by the shell before
 * deciding. Immutable by contract: the maps may be live read-only views (e.g.
 * {@link ActiveSequences#loads()}), in which case a concurrent booking may show up half-way through a
 * decision; that can give a slightly worse route and never breaks an invariant.
 *
 * @param workers       every known worker, in any state; {@link RoutingPolicy} filters them. Kept sorted
 *                      by id so decisions do not depend on the order membership arrived in
 * @param overlapBlocks leading blocks of this request's prefix each worker holds on the device (absent = 0)
 * @param source        where {@code overlapBlocks} came from; {@link OverlapSource#NONE} when missing
 * @param activeLoad    this router's booked load per worker (absent = {@link ActiveLoad#NONE})
 * @param bookedAtReport the booked load per worker when that worker's last load report arrived (see
 *                      {@link LoadMerge#DELTA}; absent = {@link ActiveLoad#NONE})
 * @param tiered        per worker the prefix held per tier, for workers holding part of it below the
 *                      device (absent = {@link KvOverlap#deviceOnly} of {@code overlapBlocks})
 * @param ranking       the aggregated workers by load, kept by the booking ledger from the same reports and
 *                      bookings ({@link WorkerRanking#NONE}: a decision scores every worker)
 */
public record ClusterSnapshot(List<WorkerView> workers, Map<String, Integer> overlapBlocks, OverlapSource source,
                              Map<String, ActiveLoad> activeLoad, Map<String, ActiveLoad> bookedAtReport,
                              Map<String, KvOverlap> tiered, WorkerRanking ranking) {

    private static final Comparator<WorkerView> BY_ID = Comparator.comparing(WorkerView::id);

    public ClusterSnapshot {
        Objects.requireNonNull(source, "source");
        workers = sortedById(Objects.requireNonNull(workers, "workers"));
        overlapBlocks = overlapBlocks == null ? Map.of() : overlapBlocks;
        activeLoad = activeLoad == null ? Map.of() : activeLoad;
        bookedAtReport = bookedAtReport == null ? Map.of() : bookedAtReport;
        tiered = tiered == null ? Map.of() : tiered;
        ranking = ranking == null ? WorkerRanking.NONE : ranking;
        if (source == OverlapSource.NONE) {
            overlapBlocks = Map.of();
            tiered = Map.of();
        }
    }

    /** A snapshot without a ranking: a decision scores every worker. */
    public ClusterSnapshot(List<WorkerView> workers, Map<String, Integer> overlapBlocks, OverlapSource source,
                           Map<String, ActiveLoad> activeLoad, Map<String, ActiveLoad> bookedAtReport,
                           Map<String, KvOverlap> tiered) {
        this(workers, overlapBlocks, source, activeLoad, bookedAtReport, tiered, WorkerRanking.NONE);
    }

    /** This snapshot with {@code r} as its ranking. */
    public ClusterSnapshot withRanking(WorkerRanking r) {
        return new ClusterSnapshot(workers, overlapBlocks, source, activeLoad, bookedAtReport, tiered, r);
    }

    /** A snapshot whose overlap is on the device only. */
    public ClusterSnapshot(List<WorkerView> workers, Map<String, Integer> overlapBlocks, OverlapSource source,
                           Map<String, ActiveLoad> activeLoad, Map<String, ActiveLoad> bookedAtReport) {
        this(workers, overlapBlocks, source, activeLoad, bookedAtReport, Map.of());
    }

    /** A snapshot from the indexer's per-tier answer. */
    public static ClusterSnapshot ofTiers(List<WorkerView> workers, Map<String, KvOverlap> overlaps, OverlapSource source,
                                          Map<String, ActiveLoad> activeLoad, Map<String, ActiveLoad> bookedAtReport) {
        Map<String, Integer> device = new java.util.HashMap<>();
        Map<String, KvOverlap> lower = new java.util.HashMap<>();
        overlaps.forEach((id, o) -> {
            if (o.deviceRun() > 0) {
                device.put(id, o.deviceRun());
            }
            if (o.hasLowerTiers()) {
                lower.put(id, o);
            }
        });
        return new ClusterSnapshot(workers, device, source, activeLoad, bookedAtReport, lower);
    }

    /** A snapshot whose bookings are all newer than every load report. */
    public ClusterSnapshot(List<WorkerView> workers, Map<String, Integer> overlapBlocks, OverlapSource source,
                           Map<String, ActiveLoad> activeLoad) {
        this(workers, overlapBlocks, source, activeLoad, Map.of(), Map.of());
    }

    /** A snapshot without overlap data: the policy degrades to load-based routing. */
    public static ClusterSnapshot withoutOverlap(List<WorkerView> workers, Map<String, ActiveLoad> activeLoad) {
        return new ClusterSnapshot(workers, Map.of(), OverlapSource.NONE, activeLoad, Map.of(), Map.of());
    }

    public int overlapOf(String workerId) {
        Integer o = overlapBlocks.get(workerId);
        return o == null ? 0 : Math.max(0, o);
    }

    /** What {@code workerId} holds of the prefix, per tier. */
    public KvOverlap tieredOf(String workerId) {
        KvOverlap o = tiered.get(workerId);
        return o != null ? o : KvOverlap.deviceOnly(overlapOf(workerId));
    }

    public ActiveLoad activeLoadOf(String workerId) {
        ActiveLoad a = activeLoad.get(workerId);
        return a == null ? ActiveLoad.NONE : a;
    }

    public ActiveLoad bookedAtReportOf(String workerId) {
        ActiveLoad a = bookedAtReport.get(workerId);
        return a == null ? ActiveLoad.NONE : a;
    }

    private static List<WorkerView> sortedById(List<WorkerView> workers) {
        if (workers instanceof WorkersById) {
            return workers;
        }
        for (int i = 1; i < workers.size(); i++) {
            if (workers.get(i - 1).id().compareTo(workers.get(i).id()) > 0) {
                List<WorkerView> copy = new ArrayList<>(workers);
                copy.sort(BY_ID);
                return List.copyOf(copy);
            }
        }
        return workers;
    }
}
