package io.flotilla.router.core;

import java.util.Map;
import java.util.Objects;

/**
 * What {@link RoutingPolicy#decide} returns. Deciding books nothing: the shell passes a routed
 * decision to {@link BookingLedger#book} afterwards.
 *
 * @param workerId             the worker that generates (aggregated or decode); "" unless ROUTED
 * @param prefillWorkerId      the separate prefill worker, "" when the request runs aggregated
 * @param overlapBlocks        matched blocks on {@code workerId}
 * @param prefillOverlapBlocks matched blocks on {@code prefillWorkerId} (0 when aggregated)
 * @param newPrefillTokens     uncached prompt tokens the prefilling worker must compute (booked as its
 *                             active prefill tokens until prefill is done)
 * @param newDecodeBlocks      KV blocks the request adds on {@code workerId} (booked as its active
 *                             decode blocks until freed): ⌈(isl + osl)/bs⌉ minus the full blocks of
 *                             its prefix already resident there
 * @param scores               cost per candidate of the pool {@code workerId} was picked from (when pruned, the
 *                             candidates it priced: {@link CandidateSet}), plus
 *                             "prefill:"-prefixed costs of the prefill pool when one was scored
 * @param unit                 unit of {@code scores}
 * @param retryAfterMs         when BUSY: the hint for Retry-After; 0 otherwise
 * @param onboardHostBlocks    prefix blocks the prefilling worker was priced to onboard from host memory
 * @param onboardDiskBlocks    ... from disk (both 0 when its device prefix or a recompute was cheaper)
 * @param scan                 how many workers were scored, and why all of them when the decision did not prune
 */
public record Decision(Outcome outcome, String workerId, String workerEndpoint, String prefillWorkerId,
                       String prefillEndpoint, int overlapBlocks, int prefillOverlapBlocks, int newPrefillTokens, int newDecodeBlocks,
                       Map<String, Double> scores, ModeUsed modeUsed, CostUnit unit, long retryAfterMs,
                       int onboardHostBlocks, int onboardDiskBlocks, Scan scan) {

    public enum Outcome {
        /** A worker was chosen. */
        ROUTED,
        /** Every eligible worker is busy: answer 503 with Retry-After. */
        BUSY,
        /** No eligible worker for this model and block size: answer UNAVAILABLE. */
        NO_WORKER
    }

    public Decision {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(modeUsed, "modeUsed");
        workerId = workerId == null ? "" : workerId;
        workerEndpoint = workerEndpoint == null ? "" : workerEndpoint;
        prefillWorkerId = prefillWorkerId == null ? "" : prefillWorkerId;
        prefillEndpoint = prefillEndpoint == null ? "" : prefillEndpoint;
        scores = scores == null ? Map.of() : scores;
        scan = scan == null ? Scan.UNRECORDED : scan;
    }

    /** A decision that does not say how it was scanned. */
    public Decision(Outcome outcome, String workerId, String workerEndpoint, String prefillWorkerId,
                    String prefillEndpoint, int overlapBlocks, int prefillOverlapBlocks, int newPrefillTokens,
                    int newDecodeBlocks, Map<String, Double> scores, ModeUsed modeUsed, CostUnit unit, long retryAfterMs,
                    int onboardHostBlocks, int onboardDiskBlocks) {
        this(outcome, workerId, workerEndpoint, prefillWorkerId, prefillEndpoint, overlapBlocks, prefillOverlapBlocks,
                newPrefillTokens, newDecodeBlocks, scores, modeUsed, unit, retryAfterMs, onboardHostBlocks,
                onboardDiskBlocks, Scan.UNRECORDED);
    }

    /** A decision without onboarding. */
    public Decision(Outcome outcome, String workerId, String workerEndpoint, String prefillWorkerId,
                    String prefillEndpoint, int overlapBlocks, int prefillOverlapBlocks, int newPrefillTokens,
                    int newDecodeBlocks, Map<String, Double> scores, ModeUsed modeUsed, CostUnit unit, long retryAfterMs) {
        this(outcome, workerId, workerEndpoint, prefillWorkerId, prefillEndpoint, overlapBlocks, prefillOverlapBlocks,
                newPrefillTokens, newDecodeBlocks, scores, modeUsed, unit, retryAfterMs, 0, 0);
    }

    /** The deepest tier the prefilling worker onboards from: "disk", "host", else "device" (or "none" without overlap). */
    public String prefixTier() {
        if (onboardDiskBlocks > 0) {
            return "disk";
        }
        if (onboardHostBlocks > 0) {
            return "host";
        }
        return (disaggregated() ? prefillOverlapBlocks : overlapBlocks) > 0 ? "device" : "none";
    }

    public Decision withScan(Scan s) {
        return new Decision(outcome, workerId, workerEndpoint, prefillWorkerId, prefillEndpoint, overlapBlocks,
                prefillOverlapBlocks, newPrefillTokens, newDecodeBlocks, scores, modeUsed, unit, retryAfterMs,
                onboardHostBlocks, onboardDiskBlocks, s);
    }

    static Decision busy(ModeUsed mode, CostUnit unit, Map<String, Double> scores, long retryAfterMs) {
        return new Decision(Outcome.BUSY, "", "", "", "", 0, 0, 0, 0, scores, mode, unit, retryAfterMs);
    }

    static Decision noWorker(ModeUsed mode) {
        return new Decision(Outcome.NO_WORKER, "", "", "", "", 0, 0, 0, 0, Map.of(), mode, CostUnit.BLOCKS, 0);
    }

    public boolean routed() {
        return outcome == Outcome.ROUTED;
    }

    public boolean disaggregated() {
        return !prefillWorkerId.isEmpty();
    }

    /** The worker that computes the prompt: the prefill worker when disaggregated, else the worker. */
    public String prefillTarget() {
        return disaggregated() ? prefillWorkerId : workerId;
    }
}
