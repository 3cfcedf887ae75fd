package io.flotilla.planner.config;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.plan.PlannerConfig;
import io.flotilla.planner.predict.PredictorSettings;
import jakarta.validation.Valid;
import jakarta.validation.Validation;
import jakarta.validation.ValidatorFactory;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.hibernate.validator.messageinterpolation.ParameterMessageInterpolator;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.bind.validation.ValidationBindHandler;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.validation.annotation.Validated;
import org.springframework.validation.beanvalidation.SpringValidatorAdapter;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Planner settings (planner-service/README.md explains the algorithm behind each): the one place they
 * and their defaults are stated. {@link #toConfig} turns them into the algorithm's {@link PlannerConfig};
 * {@link #bind} binds and validates a map of them outside Spring (tests, simulations), with these
 * defaults for everything the map leaves out. A key under {@code flotilla.planner} that names no setting
 * is an error, not a silent no-op.
 *
 * @param connector     how decisions are applied: shadow (record only), local or kubernetes
 * @param namespace     Kubernetes namespace of the worker Deployments (kubernetes connector)
 * @param mode          aggregated (one pool of aggregated workers) or disaggregated (prefill and decode pools)
 * @param model         the model whose pools are planned (requests, workers and decisions of other models are ignored)
 * @param interval      planning interval: one observation and one decision per interval
 * @param coldStart     how long a new worker takes to become READY, stated or measured
 * @param sla           the latency targets the pools are sized for, and the capacity kept above them
 * @param profile       performance-profile JSON file (bin/flotilla profile); empty: the simulated engine's profile
 * @param simSpeedup    speedup of the simulated workers, when the built-in profile is used
 * @param gpuBudget     most GPUs the planned pools may use together
 * @param history       decisions kept for GET /planner/decisions
 * @param local         the local connector's repository and worker numbers
 * @param deadlines     how long the connectors wait on a draining worker and on an incomplete multi-pod instance
 * @param prefill       prefill pool bounds
 * @param decode        decode pool bounds
 * @param aggregated    aggregated pool bounds
 * @param predictor     load predictor
 * @param correction    correction factors
 * @param scaling       thresholds, cooldown, the break-even scale-down rule and hold-offs
 * @param seasonality   period detection on the request rate and the seasonal forecast
 * @param leaderElection which of several planner replicas applies its targets (a Kubernetes Lease)
 */
@Validated
@ConfigurationProperties(prefix = PlannerProperties.PREFIX, ignoreUnknownFields = false)
public record PlannerProperties(
        @DefaultValue("shadow") @Pattern(regexp = "shadow|local|kubernetes") String connector,
        @DefaultValue("flotilla") @NotBlank String namespace,
        @DefaultValue("flotilla-sim") @NotBlank String model,
        @DefaultValue("aggregated") @Pattern(regexp = "aggregated|disaggregated") String mode,
        @DefaultValue("30s") Duration interval,
        @DefaultValue @Valid ColdStart coldStart,
        @DefaultValue @Valid Sla sla,
        String profile,
        @DefaultValue("1.0") @DecimalMin("0.001") double simSpeedup,
        @DefaultValue("16") @Min(0) int gpuBudget,
        @DefaultValue("100") @Min(1) int history,
        @DefaultValue @Valid Local local,
        @DefaultValue @Valid Deadlines deadlines,
        @DefaultValue @Valid Prefill prefill,
        @DefaultValue @Valid Decode decode,
        @DefaultValue @Valid Aggregated aggregated,
        @DefaultValue @Valid Predictor predictor,
        @DefaultValue @Valid Correction correction,
        @DefaultValue @Valid Scaling scaling,
        @DefaultValue @Valid Seasonality seasonality,
        @DefaultValue @Valid LeaderElection leaderElection) {

    public static final String PREFIX = "flotilla.planner";

    /**
     * @param readyTime how long a new worker takes to become READY: the planner sizes for the load expected then,
     *                  and a restart costs that much worker time (the break-even time of scale-down)
     * @param learn     replace {@code readyTime} by the cold start measured from the planner's own scale-ups
     *                  (the longest of the last five), once one has completed
     */
    public record ColdStart(@DefaultValue("120s") Duration readyTime, @DefaultValue("true") boolean learn) {
    }

    /**
     * @param ttft     time-to-first-token target
     * @param itl      inter-token-latency target
     * @param headroom capacity added on top of the predicted load (0.1 = 10 %)
     */
    public record Sla(@DefaultValue("1000ms") Duration ttft, @DefaultValue("50ms") Duration itl,
                      @DefaultValue("0.1") @DecimalMin("0") double headroom) {
    }

    /**
     * @param home       repository root whose bin/flotilla the local connector runs; empty: the working directory
     * @param maxWorkers highest worker number + 1 the local connector may start
     */
    public record Local(String home, @DefaultValue("64") @Min(1) int maxWorkers) {

        /** {@code home} as an absolute path; the working directory when it is empty. */
        public Path root() {
            return Path.of(home == null || home.isBlank() ? "" : home).toAbsolutePath();
        }
    }

    /**
     * @param drain      how long a drained worker may finish in-flight requests
     * @param groupReady how long a multi-pod instance (a LeaderWorkerSet group) may have a rank missing or not Ready
     *                   before the kubernetes connector removes the group whole to be recreated
     */
    public record Deadlines(@DefaultValue("60s") Duration drain, @DefaultValue("10m") Duration groupReady) {
    }

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
     * @param upThreshold   scale up when the need exceeds target × this
     * @param downThreshold replica k is needed while the need exceeds (k − 1) × this (the hysteresis band)
     * @param upCooldown    least time after a change before a scale-up
     * @param restartCost   break-even time = this × the cold start (measured, or cold-start.ready-time): an unneeded replica
     *                      is kept that long before it is released
     * @param minHold       shortest time an unneeded replica is kept, whatever the cold start
     * @param trust         how far a detected period shortens the hold, in [0, 1): with λ = 1 − trust, an unneeded
     *                      replica is kept λ × break-even when the seasonal forecast has its idle spell outlast the
     *                      break-even time, else the break-even time; 0 ignores the period
     * @param idleAfter     with no requests for this long every pool goes to its minimum
     * @param manualHoldOff how long replicas changed by hand are kept before planning resumes from them
     * @param kvPressure    decode KV usage at or above which the decode-serving pool gets one more replica
     * @param windowZ       the interval just observed asks for more replicas than the target only when its request
     *                      count is more than this many standard deviations (Poisson) above the mean rate of the
     *                      predictor.window intervals before it (a step, not that level's noise); 0: every window
     * @param riseMemory    how long the fastest rise the rate has shown within one cold start is remembered and
     *                      capacity for it kept when the forecasts fall (the rise reserve), as a fixed duration;
     *                      0: no reserve; unset: {@code riseMemoryColdStarts} cold starts
     * @param riseMemoryColdStarts the rise reserve's memory in cold starts (the measured one, or cold-start.ready-time) when
     *                      {@code riseMemory} is unset; 0: no reserve
     * @param riseReplicas  at most this many replicas of a pool are kept for the rise reserve, above what the
     *                      forecasts need
     */
    public record Scaling(@DefaultValue("1.0") @DecimalMin("0") double upThreshold,
                          @DefaultValue("0.8") @DecimalMin("0") @DecimalMax("1") double downThreshold,
                          @DefaultValue("30s") Duration upCooldown,
                          @DefaultValue("1.0") @DecimalMin("0") double restartCost,
                          @DefaultValue("60s") Duration minHold,
                          @DefaultValue("0.5") @DecimalMin("0") @DecimalMax(value = "1", inclusive = false) double trust,
                          @DefaultValue("5m") Duration idleAfter,
                          @DefaultValue("10m") Duration manualHoldOff,
                          @DefaultValue("0.95") @DecimalMin("0") double kvPressure,
                          @DefaultValue("2.0") @DecimalMin("0") double windowZ,
                          Duration riseMemory,
                          @DefaultValue("5") @DecimalMin("0") double riseMemoryColdStarts,
                          @DefaultValue("1") @Min(0) int riseReplicas) {
    }

    /**
     * @param enabled        look for a period in the request rate; when one is found, forecast with it too
     * @param minPeriod      shortest period looked for
     * @param maxPeriod      longest period looked for; (seasons + 1) × this of history is kept
     * @param minCorrelation autocorrelation at the period needed to count it as found
     * @param seasons        past periods averaged into the seasonal forecast
     */
    public record Seasonality(@DefaultValue("true") boolean enabled,
                              @DefaultValue("2m") Duration minPeriod,
                              @DefaultValue("1d") Duration maxPeriod,
                              @DefaultValue("0.6") @DecimalMin(value = "0", inclusive = false) @DecimalMax("1") double minCorrelation,
                              @DefaultValue("3") @Min(1) int seasons) {
    }

    /**
     * Off (a single planner, as in a local cluster): this planner always applies. On: replicas elect a leader on a
     * {@code coordination.k8s.io/v1} Lease in {@code namespace}; only the leader applies, the others decide and publish.
     *
     * @param enabled       elect a leader (needs a Kubernetes API and RBAC on leases)
     * @param leaseName     name of the Lease
     * @param identity      this replica's name in the Lease (the pod name); empty: the host name
     * @param leaseDuration how long a holder that stopped renewing keeps the lease before another replica takes it
     * @param renewPeriod   how often each replica renews (leader) or checks (follower) the lease; below leaseDuration
     */
    public record LeaderElection(@DefaultValue("false") boolean enabled,
                                 @DefaultValue("flotilla-planner") @NotBlank String leaseName,
                                 String identity,
                                 @DefaultValue("15s") Duration leaseDuration,
                                 @DefaultValue("5s") Duration renewPeriod) {

        public LeaderElection {
            if (renewPeriod != null && leaseDuration != null && renewPeriod.compareTo(leaseDuration) >= 0) {
                throw new IllegalArgumentException(PREFIX + ".leader-election.renew-period (" + renewPeriod
                        + ") must be shorter than lease-duration (" + leaseDuration + ")");
            }
        }
    }

    /** The algorithm's configuration; a setting that contradicts another (min above max, …) fails here with its name. */
    public PlannerConfig toConfig() {
        Map<Pool, PlannerConfig.Limits> limits = new EnumMap<>(Pool.class);
        try {
            limits.put(Pool.PREFILL, new PlannerConfig.Limits(prefill.min(), prefill.max(), prefill.gpus()));
            limits.put(Pool.DECODE, new PlannerConfig.Limits(decode.min(), decode.max(), decode.gpus()));
            limits.put(Pool.AGGREGATED, new PlannerConfig.Limits(aggregated.min(), aggregated.max(), aggregated.gpus()));
            Predictor pr = predictor;
            return new PlannerConfig(model, PlannerConfig.poolsOf("disaggregated".equals(mode)), interval,
                    coldStart.readyTime(), coldStart.learn(), sla.ttft().toNanos() / 1e6, sla.itl().toNanos() / 1e6,
                    sla.headroom(), limits, gpuBudget,
                    new PredictorSettings(pr.kind(), pr.warmup(), pr.window(), pr.alpha(), pr.beta(), pr.gamma(), pr.damping(), pr.season()),
                    new PlannerConfig.ErrorSettings(pr.errorWindow(), pr.errorFloor(), pr.conservativeError(), pr.errorMinRequests()),
                    new PlannerConfig.CorrectionSettings(correction.min(), correction.max(), correction.smoothing(), correction.minSamples()),
                    new PlannerConfig.Scaling(scaling.upThreshold(), scaling.downThreshold(), scaling.upCooldown(),
                            scaling.restartCost(), scaling.minHold(), scaling.trust(), scaling.idleAfter(), scaling.manualHoldOff(),
                            scaling.kvPressure(), scaling.windowZ(),
                            new PlannerConfig.RiseReserve(scaling.riseMemory(), scaling.riseMemoryColdStarts(), scaling.riseReplicas())),
                    new PlannerConfig.Seasonality(seasonality.enabled(), seasonality.minPeriod(), seasonality.maxPeriod(),
                            seasonality.minCorrelation(), seasonality.seasons()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(PREFIX + ": " + e.getMessage(), e);
        }
    }

    /** The defaults: what an empty configuration binds to. */
    public static PlannerProperties defaults() {
        return bind(Map.of());
    }

    /**
     * Binds {@code settings} (keys below {@code flotilla.planner}, e.g. {@code scaling.min-hold} → {@code "10s"})
     * as Spring would, with the same conversions, defaults and validation; an unknown key fails.
     */
    public static PlannerProperties bind(Map<String, ?> settings) {
        Map<String, Object> source = new LinkedHashMap<>();
        settings.forEach((k, v) -> source.put(PREFIX + "." + k, String.valueOf(v)));
        try (ValidatorFactory factory = Validation.byDefaultProvider().configure()
                .messageInterpolator(new ParameterMessageInterpolator()).buildValidatorFactory()) {
            BindHandler handler = new ValidationBindHandler(new NoUnboundElementsBindHandler(BindHandler.DEFAULT),
                    new SpringValidatorAdapter(factory.getValidator()));
            return new Binder(new MapConfigurationPropertySource(source))
                    .bindOrCreate(PREFIX, Bindable.of(PlannerProperties.class), handler);
        }
    }
}
