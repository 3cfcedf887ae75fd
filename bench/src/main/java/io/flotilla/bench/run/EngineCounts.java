package io.flotilla.bench.run;

/**
 * Cluster counters read around one run ({@code after − before}); NaN where the cluster did not expose them.
 *
 * @param exact           finished KV-routed requests whose predicted overlap equalled, to the block, the tokens the
 *                        worker reported cached ({@code flotilla_gateway_overlap_predictions_total{result="exact"}})
 * @param over            … that were predicted more blocks than the worker reused
 * @param under           … that were predicted fewer
 * @param engineRequests  requests whose engine output was read for its reuse count (llama.cpp workers'
 *                        {@code flotilla_worker_llama_mirror_checks_total}, agree + disagree)
 * @param mirrorDisagree  … whose count disagreed with the worker's cache mirror
 * @param reusedTokens    prompt tokens the engine took from its cache, by its own count
 * @param evaluatedTokens prompt tokens the engine evaluated, by its own count
 * @param workerCpuMs     CPU time of the worker processes (user + system, every thread: engine and JVM)
 */
public record EngineCounts(double exact, double over, double under, double engineRequests, double mirrorDisagree,
                           double reusedTokens, double evaluatedTokens, double workerCpuMs) {

    public static final EngineCounts UNKNOWN = new EngineCounts(Double.NaN, Double.NaN, Double.NaN, Double.NaN,
            Double.NaN, Double.NaN, Double.NaN, Double.NaN);

    public EngineCounts minus(EngineCounts before) {
        return new EngineCounts(exact - before.exact, over - before.over, under - before.under,
                engineRequests - before.engineRequests, mirrorDisagree - before.mirrorDisagree,
                reusedTokens - before.reusedTokens, evaluatedTokens - before.evaluatedTokens,
                workerCpuMs - before.workerCpuMs);
    }

    /** Routed requests whose prediction was judged. */
    public double predicted() {
        return exact + over + under;
    }

    /** Share of judged requests predicted exactly to the block; NaN when none was judged. */
    public double exactShare() {
        return predicted() > 0 ? exact / predicted() : Double.NaN;
    }

    /** Prompt tokens the engine evaluated per request it served; NaN when unknown. */
    public double evaluatedPerRequest() {
        return engineRequests > 0 ? evaluatedTokens / engineRequests : Double.NaN;
    }

    /** Reused ÷ (reused + evaluated) prompt tokens, by the engine's count; NaN when unknown. */
    public double reusedShare() {
        double all = reusedTokens + evaluatedTokens;
        return all > 0 ? reusedTokens / all : Double.NaN;
    }
}
