package io.flotilla.router.config;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Router settings.
 *
 * @param grpcPort       port of the RouterService gRPC server
 * @param indexerAddress host:port of the kv-indexer's IndexerService
 * @param mode           routing mode at start-up: kv, load, round-robin or random
 */
@Validated
@ConfigurationProperties("flotilla.router")
public record RouterProperties(
        @DefaultValue("7001") @Min(0) @Max(65535) int grpcPort,
        @DefaultValue("localhost:7002") @NotBlank String indexerAddress,
        @DefaultValue("kv") @Pattern(regexp = "kv|load|round-robin|random") String mode) {
}
