package io.flotilla.router.config;

import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;

/**
 * Router settings.
 *
 * @param grpcPort              port of the RouterService gRPC server
 * @param indexerAddress        host:port of the kv-indexer's IndexerService
 * @param mode                  routing mode at start-up: kv, load, round-robin or random
 * @param indexerDeadline       deadline of one FindMatches call; past it the router uses its own approximate index
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
 */
@Validated
@ConfigurationProperties("flotilla.router")
public record RouterProperties(
        @DefaultValue("7001") @Min(0) @Max(65535) int grpcPort,
        @DefaultValue("localhost:7002") @NotBlank String indexerAddress,
        @DefaultValue("kv") @Pattern(regexp = "kv|load|round-robin|random") String mode,
        @DefaultValue("10ms") Duration indexerDeadline,
        @DefaultValue("1.0") @DecimalMin("0") double weightPrefill,
        @DefaultValue("1.0") @DecimalMin("0") double weightDecode,
        @DefaultValue("1.0") @DecimalMin("0") double weightQueue,
        @DefaultValue("0") @DecimalMin("0") double temperature,
        @DefaultValue("1.0") @DecimalMin("0") double busyPrefillFraction,
        @DefaultValue("0.95") @DecimalMin("0") double busyDecodeFraction,
        @DefaultValue("1024") @Min(0) int disaggMinUncachedTokens,
        @DefaultValue("10m") Duration sequenceTtl,
        @DefaultValue("120s") Duration approxTtl,
        @DefaultValue("0") long seed) {
}
