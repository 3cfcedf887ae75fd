package io.flotilla.router.core;

/**
 * How many workers one decision considered, and why it considered every worker when it did not prune.
 *
 * @param considered workers the decision looked at: the candidate set, or every worker in the snapshot
 * @param walked     entries read from the {@link WorkerRanking} to find the least-loaded eligible ones
 * @param fullScan   why every worker was scored; {@link FullScan#NONE} for a pruned decision
 */
public record Scan(int considered, int walked, FullScan fullScan) {

    /** A decision that did not say (built outside {@link RoutingPolicy#decide}). */
    public static final Scan UNRECORDED = new Scan(0, 0, FullScan.NONE);

    public enum FullScan {
        /** Pruned: only the candidate set was scored. */
        NONE("none"),
        /** Pruning is switched off ({@code flotilla.router.candidates.pruning=false}). */
        DISABLED("disabled"),
        /** A baseline or a softmax (temperature &gt; 0): every candidate's cost is part of the answer. */
        NOT_GREEDY("not-greedy"),
        /** The snapshot carries no {@link WorkerRanking}. */
        UNRANKED("unranked"),
        /** The model has prefill or decode workers: only aggregated pools are ranked. */
        DISAGGREGATED("disaggregated"),
        /** The model's policy is not the standard formula, which the candidate set's guarantee is stated for. */
        CUSTOM_POLICY("custom-policy"),
        /** No eligible worker is free: the busy (or no-worker) answer is built from the whole pool. */
        NO_FREE_CANDIDATE("no-free-candidate");

        private final String tag;

        FullScan(String tag) {
            this.tag = tag;
        }

        public String metricTag() {
            return tag;
        }
    }

    public boolean pruned() {
        return fullScan == FullScan.NONE;
    }
}
