package io.flotilla.indexer.service;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;

/**
 * KV indexer settings.
 *
 * @param grpcPort              port of the IndexerService gRPC server
 * @param snapshotDir           directory for index snapshots
 * @param snapshotInterval      how often the index is written to a snapshot (also on shutdown)
 * @param snapshotsKept         snapshot files kept; older ones are deleted
 * @param rebuildOnStart        ignore snapshots and rebuild by replaying flotilla.kv-events from its earliest offset
 * @param reconcileConcurrency  worker snapshot requests in flight at once
 * @param reconcileTimeout      deadline of one GetKvSnapshot call
 * @param reconcileAttempts     attempts per reconciliation (exponential backoff with jitter between them)
 * @param tickInterval          how often leases and pending reconciliations are checked
 * @param membershipCatchUp     at start-up, how long the KV feed waits for membership to be read to its end
 * @param sharding              indexer shards: replicas that split flotilla.kv-events' partitions between them
 */
@Validated
@ConfigurationProperties("flotilla.indexer")
public record IndexerProperties(
        @DefaultValue("7002") @Min(0) @Max(65535) int grpcPort,
        @DefaultValue(".flotilla/indexer") @NotBlank String snapshotDir,
        @DefaultValue("30s") Duration snapshotInterval,
        @DefaultValue("3") @Min(1) int snapshotsKept,
        @DefaultValue("false") boolean rebuildOnStart,
        @DefaultValue("4") @Min(1) int reconcileConcurrency,
        @DefaultValue("2s") Duration reconcileTimeout,
        @DefaultValue("5") @Min(1) int reconcileAttempts,
        @DefaultValue("250ms") Duration tickInterval,
        @DefaultValue("15s") Duration membershipCatchUp,
        @DefaultValue @Valid Sharding sharding) {

    /**
     * Indexer shards. Off (the default), one indexer reads every partition of flotilla.kv-events and answers for every
     * worker. On, the replicas that share {@code groupId} form a Kafka consumer group over it: each indexes only the
     * workers of the partitions it is assigned, snapshots per partition under {@code snapshotDir/partition-<n>}, and
     * the router asks every shard (its {@code indexer.addresses}).
     *
     * @param enabled whether this indexer is one shard of a group
     * @param groupId the consumer group of the shards (one group per indexer deployment)
     */
    public record Sharding(@DefaultValue("false") boolean enabled, @DefaultValue("flotilla-indexer") @NotBlank String groupId) {

        public static final Sharding OFF = new Sharding(false, "flotilla-indexer");
    }
}
