package io.flotilla.router.config;

import io.flotilla.router.client.DeadlineEstimator;
import io.flotilla.router.core.LoadMerge;
import io.flotilla.router.core.PolicySpec;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.Strategy;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Router settings: the one place their defaults are written. {@link #routingConfig()} produces the
 * pure core's {@link RouterConfig} from them; the core's tests bind an empty environment to get the
 * same defaults the running router has.
 *
 * @param name                  this replica's name; its router id (in router-sync records, WatchCapacity updates and
 *                              logs) is the name and a random suffix, unique per process start
 * @param grpcPort              port of the RouterService gRPC server
 * @param indexerAddress        host:port of the kv-indexer's IndexerService
 * @param indexerAddresses      host:port of every indexer shard (indexers with {@code flotilla.indexer.sharding.enabled});
 *                              when set the router asks them all and {@code indexerAddress} is not used
 * @param mode                  routing mode at start-up: kv, load, round-robin or random
 * @param indexerDeadline       a fixed FindMatches deadline; unset (the default), the deadline adapts between
 *                              {@code indexerDeadlineMin} and {@code indexerDeadlineMax}. Past the deadline the router
 *                              uses its own approximate index
 * @param indexerDeadlineMin    the adaptive deadline's floor
 * @param indexerDeadlineMax    the adaptive deadline's ceiling, and the deadline before the first measurement
 * @param indexerDeadlineQuantile the latency quantile the adaptive deadline follows
 * @param indexerDeadlineMargin the adaptive deadline is this many times the measured quantile
 * @param indexerDeadlineWindow the measured quantile covers the FindMatches calls of this long a window (whole seconds)
 * @param weightPrefill         w_prefill of the cost formula
 * @param weightDecode          w_decode of the cost formula
 * @param weightQueue           w_queue of the cost formula
 * @param temperature           0 picks the cheapest worker; above 0 samples a softmax over normalised costs
 * @param busyPrefillFraction   a worker is busy when its queued prefill tokens exceed this fraction of its KV capacity in tokens (0 disables)
 * @param busyDecodeFraction    a worker is busy when its active decode blocks exceed this fraction of its KV blocks (0 disables)
 * @param disaggMinUncachedTokens a separate prefill worker is used only when the uncached prompt is longer than this
 * @param sequenceTtl           bookings the router never heard a Release for are forgotten after this long
 * @param approxTtl             how long a routed prefix is assumed to stay cached (approximate index)
 * @param seed                  seed of the random baseline and softmax sampling (0: from the clock)
 * @param capacityCoalesce      WatchCapacity: changes within this long of the last update are sent together at its end
 * @param capacityHeartbeat     WatchCapacity: the state is sent again after this long without a change
 * @param candidatePruning      a greedy decision scores only the workers holding any of the prompt's blocks plus the
 *                              least-loaded eligible ones (false: every worker)
 * @param candidateLeastLoaded  how many least-loaded eligible workers join the holders when pruning
 * @param sharedEventLoop       the gRPC server and the indexer channel share one I/O thread, so a Route's
 *                              indexer call and answer never hand off between threads (false: gRPC's default pool)
 * @param epp                   the endpoint picker for Gateway API Inference Extension pools (off by default)
 * @param kubernetes            the worker pods as a view of membership and the runtime ConfigMap (off by default)
 * @param policy                routing policy sections by model ({@code default}: every model): {@code filters} added
 *                              after eligible, lora and tenancy, and {@code scorers.<name>} weights over the standard
 *                              formula (weight 0 removes a scorer); none by default
 */
@Validated
@ConfigurationProperties("flotilla.router")
public record RouterProperties(
        @DefaultValue("router") @Pattern(regexp = "[A-Za-z0-9._-]+") String name,
        @DefaultValue("7001") @Min(0) @Max(65535) int grpcPort,
        @DefaultValue("localhost:7002") @NotBlank String indexerAddress,
        @DefaultValue List<@NotBlank String> indexerAddresses,
        @DefaultValue("kv") @Pattern(regexp = "kv|load|round-robin|random") String mode,
        Duration indexerDeadline,
        @DefaultValue("5ms") Duration indexerDeadlineMin,
        @DefaultValue("50ms") Duration indexerDeadlineMax,
        @DefaultValue("0.99") @DecimalMin(value = "0", inclusive = false) @DecimalMax("1") double indexerDeadlineQuantile,
        @DefaultValue("1.5") @DecimalMin("1") double indexerDeadlineMargin,
        @DefaultValue("10s") Duration indexerDeadlineWindow,
        @DefaultValue("1.0") @DecimalMin("0") double weightPrefill,
        @DefaultValue("1.0") @DecimalMin("0") double weightDecode,
        @DefaultValue("1.0") @DecimalMin("0") double weightQueue,
        @DefaultValue("0") @DecimalMin("0") double temperature,
        @DefaultValue("1.0") @DecimalMin("0") double busyPrefillFraction,
        @DefaultValue("0.95") @DecimalMin("0") double busyDecodeFraction,
        @DefaultValue("1024") @Min(0) int disaggMinUncachedTokens,
        @DefaultValue("10m") Duration sequenceTtl,
        @DefaultValue("120s") Duration approxTtl,
        @DefaultValue("0") long seed,
        @DefaultValue("1ms") Duration capacityCoalesce,
        @DefaultValue("5s") Duration capacityHeartbeat,
        @DefaultValue("true") boolean candidatePruning,
        @DefaultValue("16") @Min(1) int candidateLeastLoaded,
        @DefaultValue("true") boolean sharedEventLoop,
        @DefaultValue @jakarta.validation.Valid @org.springframework.boot.context.properties.NestedConfigurationProperty
        io.flotilla.router.epp.EppSettings epp,
        @DefaultValue @jakarta.validation.Valid @org.springframework.boot.context.properties.NestedConfigurationProperty
        io.flotilla.router.kube.KubernetesSettings kubernetes,
        Map<String, PolicySpec.Section> policy) {

    public RouterProperties {
        policy = policy == null ? Map.of() : Map.copyOf(policy);
    }

    /**
     * The routing core's configuration. Settings with no key here take the core's constants: load reports
     * and bookings merge by {@link LoadMerge#DELTA}, the busy answer's retry-after hint and clamp
     * ({@link RouterConfig.Busy#RETRY_AFTER_MS}), the approximate index's size bound.
     */
    public RouterConfig routingConfig() {
        return new RouterConfig(Strategy.parse(mode),
                new RouterConfig.Weights(weightPrefill, weightDecode, weightQueue), temperature, LoadMerge.DELTA,
                new RouterConfig.Busy(threshold(busyPrefillFraction), threshold(busyDecodeFraction)),
                new RouterConfig.Disagg(disaggMinUncachedTokens), sequenceTtl,
                new RouterConfig.Approx(approxTtl, RouterConfig.Approx.MAX_ENTRIES),
                new RouterConfig.Pruning(candidatePruning, candidateLeastLoaded), policy);
    }

    private static RouterConfig.Threshold threshold(double fraction) {
        return fraction <= 0 ? RouterConfig.Threshold.DISABLED : RouterConfig.Threshold.fraction(fraction);
    }

    /** The indexers to ask: every shard when {@code indexerAddresses} is set, else the one {@code indexerAddress}. */
    public List<String> indexers() {
        return indexerAddresses.isEmpty() ? List.of(indexerAddress) : indexerAddresses;
    }

    /** The FindMatches deadline's settings: fixed when {@code indexerDeadline} is set, else adaptive. */
    public DeadlineEstimator.Settings indexerDeadlineSettings() {
        if (indexerDeadline != null) {
            return DeadlineEstimator.Settings.fixed(indexerDeadline);
        }
        int slices = (int) Math.max(1, indexerDeadlineWindow.toSeconds());
        return new DeadlineEstimator.Settings(indexerDeadlineMin, indexerDeadlineMax, indexerDeadlineQuantile,
                indexerDeadlineMargin, slices, DeadlineEstimator.Settings.MIN_SAMPLES);
    }
}
