package io.flotilla.indexer.config;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * KV indexer settings.
 *
 * @param grpcPort    port of the IndexerService gRPC server
 * @param snapshotDir directory for index snapshots
 */
@Validated
@ConfigurationProperties("flotilla.indexer")
public record IndexerProperties(
        @DefaultValue("7002") @Min(0) @Max(65535) int grpcPort,
        @DefaultValue(".flotilla/indexer") @NotBlank String snapshotDir) {
}
