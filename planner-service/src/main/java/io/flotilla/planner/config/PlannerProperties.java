package io.flotilla.planner.config;

import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;

/**
 * Planner settings (planner-service/README.md explains the algorithm behind each).
 *
 * @param connector     how decisions are applied: shadow (record only), local or kubernetes
 * @param namespace     Kubernetes namespace of the worker Deployments (kubernetes connector)
 * @param mode          aggregated (one pool of aggregated workers) or disaggregated (prefill and decode pools)
 * @param model         the model whose pools are planned (requests, workers and decisions of other models are ignored)
 * @param interval      planning interval: one observation and one decision per interval
 * @param readyTime     how long a new worker takes to become READY; the planner sizes for the load expected then
 * @param learnReadyTime replace {@code readyTime} by the cold start measured from the planner's own scale-ups
 *                      (the longest of the last five), once one has completed
 * @param ttftTarget    time-to-first-token target
 * @param itlTarget     inter-token-latency target
 * @param headroom      capacity added on top of the predicted load (0.1 = 10 %)
 * @param profile       performance-profile JSON file (bin/flotilla profile); empty: the simulated engine's profile
 * @param simSpeedup    speedup of the simulated workers, when the built-in profile is used
 * @param gpuBudget     most GPUs the planned pools may use together
 * @param history       decisions kept for GET /planner/decisions
 * @param localHome     repository root whose bin/flotilla the local connector runs; empty: the working directory
 * @param localMaxWorkers highest worker number + 1 the local connector may start
 * @param drainDeadline how long a drained worker may finish in-flight requests
 * @param prefill       prefill pool bounds
 * @param decode        decode pool bounds
 * @param aggregated    aggregated pool bounds
 * @param predictor     load predictor
 * @param correction    correction factors
 * @param scaling       thresholds, cooldowns and hold-offs
 */
@Validated
@ConfigurationProperties("flotilla.planner")
public record PlannerProperties(
        @DefaultValue("shadow") @Pattern(regexp = "shadow|local|kubernetes") String connector,
        @DefaultValue("flotilla") @NotBlank String namespace,
        @DefaultValue("flotilla-sim") @NotBlank String model,
        @DefaultValue("aggregated") @Pattern(regexp = "aggregated|disaggregated") String mode,
        @DefaultValue("30s") Duration interval,
        @DefaultValue("120s") Duration readyTime,
        @DefaultValue("true") boolean learnReadyTime,
        @DefaultValue("1000ms") Duration ttftTarget,
        @DefaultValue("50ms") Duration itlTarget,
        @DefaultValue("0.1") @DecimalMin("0") double headroom,
        String profile,
        @DefaultValue("1.0") @DecimalMin("0.001") double simSpeedup,
        @DefaultValue("16") @Min(0) int gpuBudget,
        @DefaultValue("100") @Min(1) int history,
        String localHome,
        @DefaultValue("64") @Min(1) int localMaxWorkers,
        @DefaultValue("60s") Duration drainDeadline,
        @DefaultValue @Valid Prefill prefill,
        @DefaultValue @Valid Decode decode,
        @DefaultValue @Valid Aggregated aggregated,
        @DefaultValue @Valid Predictor predictor,
        @DefaultValue @Valid Correction correction,
        @DefaultValue @Valid Scaling scaling) {

    /**
     * @param min  fewest replicas (0 allowed: without prefill workers decode workers prefill themselves)
     * @param max  most replicas
     * @param gpus GPUs per replica
     */
    public record Prefill(@DefaultValue("0") @Min(0) int min, @DefaultValue("8") @Min(0) int max,
                          @DefaultValue("1") @Min(0) int gpus) {
    }

    /**
     * @param min  fewest replicas
     * @param max  most replicas
     * @param gpus GPUs per replica
     */
    public record Decode(@DefaultValue("1") @Min(0) int min, @DefaultValue("8") @Min(0) int max,
                         @DefaultValue("1") @Min(0) int gpus) {
    }

    /**
     * @param min  fewest replicas
     * @param max  most replicas
     * @param gpus GPUs per replica
     */
    public record Aggregated(@DefaultValue("1") @Min(0) int min, @DefaultValue("8") @Min(0) int max,
                             @DefaultValue("1") @Min(0) int gpus) {
    }

    /**
     * @param kind              constant, moving-average, holt or holt-winters
     * @param warmup            intervals observed before the chosen predictor is used (constant until then)
     * @param window            moving-average window, in intervals
     * @param alpha             level smoothing (holt, holt-winters)
     * @param beta              trend smoothing (holt, holt-winters)
     * @param gamma             seasonal smoothing (holt-winters)
     * @param damping           trend damping φ in (0, 1] (holt, holt-winters); 1 = classic undamped trend
     * @param season            season length in intervals (holt-winters)
     * @param errorWindow       intervals the prediction error (sMAPE) is averaged over
     * @param errorFloor        sMAPE denominator floor for the request rate, requests/s
     * @param conservativeError request-rate shortfall (mean under-forecast, see {@code PredictionError}) above
     *                          which no pool scales down
     * @param errorMinRequests  sMAPE denominator floor in requests per interval (the rate floor is at least
     *                          this / interval), so that Poisson noise at low traffic is not a prediction error
     */
    public record Predictor(
            @DefaultValue("holt") @Pattern(regexp = "constant|moving-average|holt|holt-winters") String kind,
            @DefaultValue("5") @Min(0) int warmup,
            @DefaultValue("5") @Min(1) int window,
            @DefaultValue("0.5") @DecimalMin("0.001") @DecimalMax("1") double alpha,
            @DefaultValue("0.2") @DecimalMin("0.001") @DecimalMax("1") double beta,
            @DefaultValue("0.3") @DecimalMin("0.001") @DecimalMax("1") double gamma,
            @DefaultValue("0.8") @DecimalMin("0.001") @DecimalMax("1") double damping,
            @DefaultValue("120") @Min(2) int season,
            @DefaultValue("10") @Min(1) int errorWindow,
            @DefaultValue("0.1") @DecimalMin("0.000001") double errorFloor,
            @DefaultValue("0.25") @DecimalMin("0") double conservativeError,
            @DefaultValue("10") @DecimalMin("0") double errorMinRequests) {
    }

    /**
     * @param min        lower bound of a correction factor (observed / expected latency)
     * @param max        upper bound
     * @param smoothing  weight of the newest interval
     * @param minSamples measured requests an interval needs to update the factors
     */
    public record Correction(@DefaultValue("0.5") @DecimalMin("0.01") @DecimalMax("1") double min,
                             @DefaultValue("2.0") @DecimalMin("1") double max,
                             @DefaultValue("0.3") @DecimalMin("0.001") @DecimalMax("1") double smoothing,
                             @DefaultValue("20") @Min(1) long minSamples) {
    }

    /**
     * @param upThreshold   scale up when the needed replicas exceed target × this
     * @param downThreshold scale down only when the need fits in (target − 1) × this
     * @param upCooldown    least time after a change before a scale-up
     * @param downCooldown  least time after a change before a scale-down
     * @param minStable     how long the scale-down condition must hold without a break
     * @param maxDownStep   most replicas removed per decision
     * @param idleAfter     with no requests for this long every pool goes to its minimum
     * @param manualHoldOff how long replicas changed by hand are kept before planning resumes from them
     * @param kvPressure    decode KV usage at or above which the decode-serving pool gets one more replica
     */
    public record Scaling(@DefaultValue("1.0") @DecimalMin("0") double upThreshold,
                          @DefaultValue("0.8") @DecimalMin("0") @DecimalMax("1") double downThreshold,
                          @DefaultValue("30s") Duration upCooldown,
                          @DefaultValue("120s") Duration downCooldown,
                          @DefaultValue("180s") Duration minStable,
                          @DefaultValue("1") @Min(1) int maxDownStep,
                          @DefaultValue("5m") Duration idleAfter,
                          @DefaultValue("10m") Duration manualHoldOff,
                          @DefaultValue("0.95") @DecimalMin("0") double kvPressure) {
    }
}
