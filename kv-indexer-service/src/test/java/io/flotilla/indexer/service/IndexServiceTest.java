package io.flotilla.indexer.service;

import io.flotilla.indexer.service.IndexerProperties;
import io.flotilla.indexer.core.WorkerMatch;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The indexer's shell with its feeds replaced by the in-memory twin: one writer, the KV feed after membership, the filter in the applier. */
class IndexServiceTest {

    @TempDir
    Path snapshots;

    private final Instant start = Instant.parse("2026-01-01T00:00:00Z");

    private IndexService service(InMemoryIndexFeeds feeds, Clock clock) {
        return new IndexService(new IndexerProperties(0, snapshots.toString(), Duration.ofHours(1), 3, false, 1,
                Duration.ofSeconds(1), 1, Duration.ofMillis(250), Duration.ofSeconds(15), IndexerProperties.Sharding.OFF), feeds, clock);
    }

    private static WorkerStatus status(String id, String model, int blockSize, long ts) {
        return WorkerStatus.newBuilder().setWorkerId(id).setEpoch(1).setState(WorkerState.WORKER_STATE_READY)
                .setRole(WorkerRole.WORKER_ROLE_AGGREGATED).setModel(model).setBlockSize(blockSize).setLeaseMs(60_000)
                .setTs(ts).setEndpoint(id + ":1").build();
    }

    private static IndexFeeds.KvRecord batch(String id, long seq, long offset, long... hashes) {
        BlockStored.Builder stored = BlockStored.newBuilder();
        for (long h : hashes) {
            stored.addBlocks(StoredBlock.newBuilder().setSeqHash(h).setLocalHash(h));
        }
        return new IndexFeeds.KvRecord(0, offset, KvEventBatch.newBuilder().setWorkerId(id).setEpoch(1).setSeq(seq)
                .addEvents(KvEvent.newBuilder().setStored(stored)).build());
    }

    @Test
    void theKvFeedStartsOnceMembershipIsReadAndMatchesAreFilteredByModelAndBlockSize() {
        InMemoryIndexFeeds feeds = new InMemoryIndexFeeds();
        IndexService index = service(feeds, Clock.fixed(start, ZoneOffset.UTC));
        try {
            index.start();
            assertThat(feeds.calls).containsExactly("membership");
            feeds.membershipSink.statuses(List.of(status("w16", "m", 16, 0), status("w32", "m", 32, 0),
                    status("other", "n", 16, 0)));
            index.tick();
            await().atMost(Duration.ofSeconds(5)).until(() -> index.applier().workers().size() == 3);
            assertThat(feeds.calls).as("membership not read to its end yet").containsExactly("membership");

            feeds.caughtUp = true;
            index.tick();
            await().atMost(Duration.ofSeconds(5)).until(() -> feeds.kvSink != null);
            assertThat(feeds.calls).containsExactly("membership", "kv {}");
            feeds.kvSink.kvRecords(List.of(batch("w16", 1, 0, 11, 12), batch("w32", 1, 1, 11, 12),
                    batch("other", 1, 2, 11, 12)));
            await().atMost(Duration.ofSeconds(5)).until(() -> index.applier().index().residentPairs() == 6);

            List<WorkerMatch> matches = index.findMatches("m", 16, new long[]{11, 12});
            assertThat(matches).extracting(WorkerMatch::workerId).as("never across block sizes or models")
                    .containsExactly("w16");
            assertThat(index.applier().endpointOf("w16")).isEqualTo("w16:1");
        } finally {
            index.close();
        }
        assertThat(feeds.calls).last().isEqualTo("close");
    }

    @Test
    void eachAppliedBatchReportsItsLagFromItsWorkerSealingIt() {
        InMemoryIndexFeeds feeds = new InMemoryIndexFeeds();
        feeds.caughtUp = true;
        IndexService index = service(feeds, Clock.fixed(start, ZoneOffset.UTC));
        java.util.Queue<Long> lags = new java.util.concurrent.ConcurrentLinkedQueue<>();
        index.onApplyLag(lags::add);
        try {
            index.start();
            index.tick();
            await().atMost(Duration.ofSeconds(5)).until(() -> feeds.kvSink != null);
            feeds.membershipSink.statuses(List.of(status("w", "m", 16, 0)));
            IndexFeeds.KvRecord sealed = batch("w", 1, 0, 5);
            IndexFeeds.KvRecord early = batch("w", 2, 1, 6);
            feeds.kvSink.kvRecords(List.of(
                    new IndexFeeds.KvRecord(0, 0, sealed.batch().toBuilder().setTs(start.toEpochMilli() - 250).build()),
                    new IndexFeeds.KvRecord(0, 1, early.batch().toBuilder().setTs(start.toEpochMilli() + 40).build()),
                    batch("w", 3, 2, 7)));
            await().atMost(Duration.ofSeconds(5)).until(() -> index.applier().index().residentPairs() == 3);
            assertThat(lags).as("250 ms behind; a worker clock ahead counts 0; a batch without ts is not timed")
                    .containsExactly(250L, 0L);
        } finally {
            index.close();
        }
    }

    @Test
    void aSnapshotRecordsTheKvOffsetsTheWriterApplied() throws Exception {
        InMemoryIndexFeeds feeds = new InMemoryIndexFeeds();
        feeds.caughtUp = true;
        IndexService index = service(feeds, Clock.fixed(start, ZoneOffset.UTC));
        try {
            index.start();
            index.tick();
            await().atMost(Duration.ofSeconds(5)).until(() -> feeds.kvSink != null);
            feeds.membershipSink.statuses(List.of(status("w", "m", 16, 0)));
            feeds.kvSink.kvRecords(List.of(batch("w", 1, 41, 5), batch("w", 2, 42, 6)));
            await().atMost(Duration.ofSeconds(5)).until(() -> index.applier().index().residentPairs() == 2);
            index.snapshotNow();
        } finally {
            index.close();
        }
        InMemoryIndexFeeds again = new InMemoryIndexFeeds();
        again.caughtUp = true;
        IndexService restored = service(again, Clock.fixed(start.plusSeconds(1), ZoneOffset.UTC));
        try {
            restored.start();
            restored.tick();
            await().atMost(Duration.ofSeconds(5)).until(() -> again.kvFrom != null);
            assertThat(again.kvFrom).as("replay resumes after the last applied record").isEqualTo(Map.of(0, 43L));
            assertThat(restored.applier().index().residentPairs()).isEqualTo(2);
            assertThat(restored.stateLoaded()).isTrue();
        } finally {
            restored.close();
        }
    }
}
