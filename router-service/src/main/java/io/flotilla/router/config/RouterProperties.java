package io.flotilla.router.config;

import io.flotilla.router.client.DeadlineEstimator;
import io.flotilla.router.core.LoadMerge;
import io.flotilla.router.core.PolicySpec;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.Strategy;
import io.flotilla.router.epp.EppSettings;
import io.flotilla.router.kube.KubernetesSettings;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Router settings, grouped by what they configure: the one place their defaults are written.
 * {@link #routingConfig()} produces the pure core's {@link RouterConfig} from them; the core's tests bind an
 * empty environment to get the same defaults the running router has.
 *
 * @param name            this replica's name; its router id (in router-sync records, WatchCapacity updates and logs)
 *                        is the name and a random suffix, unique per process start
 * @param grpcPort        port of the RouterService gRPC server
 * @param mode            routing mode at start-up: kv, load, round-robin or random
 * @param indexer         the kv-indexer the router asks for prefix matches, and how long it waits for an answer
 * @param weights         the cost formula's weights
 * @param temperature     0 picks the cheapest worker; above 0 samples a softmax over normalised costs
 * @param busy            when a worker counts as busy
 * @param disaggMinUncachedTokens a separate prefill worker is used only when the uncached prompt is longer than this
 * @param sequences       how long the router remembers the sequences it routed
 * @param seed            seed of the random baseline and softmax sampling (0: from the clock)
 * @param capacity        the WatchCapacity stream's pacing
 * @param candidates      which workers a greedy decision scores
 * @param sharedEventLoop the gRPC server and the indexer channel share one I/O thread, so a Route's indexer call
 *                        and answer never hand off between threads (false: gRPC's default pool)
 * @param watch           a health watch on every routable worker, so a process that dies is out of routing when its
 *                        connection goes rather than when its lease lapses
 * @param epp             the endpoint picker for Gateway API Inference Extension pools (off by default)
 * @param kubernetes      the worker pods as a view of membership and the runtime ConfigMap (off by default)
 * @param policy          routing policy sections by model ({@code default}: every model): {@code filters} added
 *                        after eligible, lora and tenancy, and {@code scorers.<name>} weights over the standard
 *                        formula (weight 0 removes a scorer); none by default
 */
@Validated
@ConfigurationProperties("flotilla.router")
public record RouterProperties(
        @DefaultValue("router") @Pattern(regexp = "[A-Za-z0-9._-]+") String name,
        @DefaultValue("7001") @Min(0) @Max(65535) int grpcPort,
        @DefaultValue("kv") @Pattern(regexp = "kv|load|round-robin|random") String mode,
        @DefaultValue @Valid Indexer indexer,
        @DefaultValue @Valid Weights weights,
        @DefaultValue("0") @DecimalMin("0") double temperature,
        @DefaultValue @Valid Busy busy,
        @DefaultValue("1024") @Min(0) int disaggMinUncachedTokens,
        @DefaultValue @Valid Sequences sequences,
        @DefaultValue("0") long seed,
        @DefaultValue @Valid Capacity capacity,
        @DefaultValue @Valid Candidates candidates,
        @DefaultValue("true") boolean sharedEventLoop,
        @DefaultValue @Valid Watch watch,
        @DefaultValue @Valid @NestedConfigurationProperty EppSettings epp,
        @DefaultValue @Valid @NestedConfigurationProperty KubernetesSettings kubernetes,
        Map<String, PolicySpec.Section> policy) {

    public RouterProperties {
        policy = policy == null ? Map.of() : Map.copyOf(policy);
    }

    /**
     * @param address   host:port of the kv-indexer's IndexerService
     * @param addresses host:port of every indexer shard (indexers with {@code flotilla.indexer.sharding.enabled});
     *                  when set the router asks them all and {@code address} is not used
     * @param deadline  how long a FindMatches call may take before the router uses its own approximate index
     */
    public record Indexer(@DefaultValue("localhost:7002") @NotBlank String address,
                          @DefaultValue List<@NotBlank String> addresses,
                          @DefaultValue @Valid Deadline deadline) {

        /** The indexers to ask: every shard when {@code addresses} is set, else the one {@code address}. */
        public List<String> all() {
            return addresses.isEmpty() ? List.of(address) : addresses;
        }
    }

    /**
     * The FindMatches deadline: fixed when {@code fixed} is set, else adaptive between {@code min} and {@code max}.
     *
     * @param fixed    a fixed deadline instead of the adaptive one; unset by default
     * @param min      the adaptive deadline's floor
     * @param max      the adaptive deadline's ceiling, and the deadline before the first measurement
     * @param quantile the latency quantile the adaptive deadline follows
     * @param margin   the adaptive deadline is this many times the measured quantile
     * @param window   the measured quantile covers the FindMatches calls of this long a window (whole seconds)
     * @param stakeShare a call for a long prompt may wait up to this share of the prompt's prefill time (on the
     *                   fastest worker that could serve it) when that is longer than the deadline; 0: never
     * @param stakeMax   the longest a call may wait for its stake
     */
    public record Deadline(Duration fixed,
                           @DefaultValue("5ms") Duration min,
                           @DefaultValue("50ms") Duration max,
                           @DefaultValue("0.99") @DecimalMin(value = "0", inclusive = false) @DecimalMax("1") double quantile,
                           @DefaultValue("1.5") @DecimalMin("1") double margin,
                           @DefaultValue("10s") Duration window,
                           @DefaultValue("0.2") @DecimalMin("0") @DecimalMax("1") double stakeShare,
                           @DefaultValue("250ms") Duration stakeMax) {

        /** The stake these give; none with a fixed deadline, which means exactly that deadline for every call. */
        public DeadlineEstimator.Stake stake() {
            return fixed != null ? DeadlineEstimator.Stake.NONE : new DeadlineEstimator.Stake(stakeShare, stakeMax);
        }

        /** The estimator's settings these give. */
        public DeadlineEstimator.Settings settings() {
            if (fixed != null) {
                return DeadlineEstimator.Settings.fixed(fixed);
            }
            int slices = (int) Math.max(1, window.toSeconds());
            return new DeadlineEstimator.Settings(min, max, quantile, margin, slices, DeadlineEstimator.Settings.MIN_SAMPLES);
        }
    }

    /**
     * @param prefill w_prefill of the cost formula
     * @param decode  w_decode of the cost formula
     * @param queue   w_queue of the cost formula
     */
    public record Weights(@DefaultValue("1.0") @DecimalMin("0") double prefill,
                          @DefaultValue("1.0") @DecimalMin("0") double decode,
                          @DefaultValue("1.0") @DecimalMin("0") double queue) {
    }

    /**
     * @param prefillFraction a worker is busy when its queued prefill tokens exceed this fraction of its KV capacity
     *                        in tokens (0 disables)
     * @param decodeFraction  a worker is busy when its active decode blocks exceed this fraction of its KV blocks
     *                        (0 disables)
     */
    public record Busy(@DefaultValue("1.0") @DecimalMin("0") double prefillFraction,
                       @DefaultValue("0.95") @DecimalMin("0") double decodeFraction) {
    }

    /**
     * @param ttl       bookings the router never heard a Release for are forgotten after this long
     * @param approxTtl how long a routed prefix is assumed to stay cached on its worker (approximate index)
     */
    public record Sequences(@DefaultValue("10m") Duration ttl, @DefaultValue("120s") Duration approxTtl) {
    }

    /**
     * @param coalesce  changes within this long of the last update are sent together at its end
     * @param heartbeat the state is sent again after this long without a change
     * @param maxShare  the most of its thread WatchCapacity's publisher spends on updates (each is linear in the
     *                  fleet): after an update that took t, the next waits until t / max-share has passed
     */
    public record Capacity(@DefaultValue("1ms") Duration coalesce, @DefaultValue("5s") Duration heartbeat,
                           @DefaultValue("0.1") @DecimalMin(value = "0", inclusive = false) @DecimalMax("1")
                           double maxShare) {
    }

    /**
     * @param pruning     a greedy decision scores only the workers holding any of the prompt's blocks plus the
     *                    least-loaded eligible ones (false: every worker)
     * @param leastLoaded how many least-loaded eligible workers join the holders when pruning
     */
    public record Candidates(@DefaultValue("true") boolean pruning, @DefaultValue("16") @Min(1) int leastLoaded) {
    }

    /**
     * @param enabled  keep a gRPC health Watch open to every routable worker; an established watch that breaks (or
     *                 says NOT_SERVING) makes the worker suspect at once (false: leases and gateway reports only)
     * @param retryMax the longest wait before trying again to watch a worker whose watch could not be set up
     */
    public record Watch(@DefaultValue("true") boolean enabled, @DefaultValue("30s") Duration retryMax) {
    }

    /**
     * The routing core's configuration. Settings with no key here take the core's constants: load reports
     * and bookings merge by {@link LoadMerge#DELTA}, the busy answer's retry-after hint and clamp
     * ({@link RouterConfig.Busy#RETRY_AFTER_MS}), the approximate index's size bound.
     */
    public RouterConfig routingConfig() {
        return new RouterConfig(Strategy.parse(mode),
                new RouterConfig.Weights(weights.prefill(), weights.decode(), weights.queue()), temperature,
                LoadMerge.DELTA,
                new RouterConfig.Busy(threshold(busy.prefillFraction()), threshold(busy.decodeFraction())),
                new RouterConfig.Disagg(disaggMinUncachedTokens), sequences.ttl(),
                new RouterConfig.Approx(sequences.approxTtl(), RouterConfig.Approx.MAX_ENTRIES),
                new RouterConfig.Pruning(candidates.pruning(), candidates.leastLoaded()), policy);
    }

    private static RouterConfig.Threshold threshold(double fraction) {
        return fraction <= 0 ? RouterConfig.Threshold.DISABLED : RouterConfig.Threshold.fraction(fraction);
    }
}
