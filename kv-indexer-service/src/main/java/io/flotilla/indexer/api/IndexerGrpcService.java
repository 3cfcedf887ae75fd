package io.flotilla.indexer.api;

import io.flotilla.indexer.core.ApplierStats;
import io.flotilla.indexer.core.WorkerMatch;
import io.flotilla.indexer.service.IndexService;
import io.flotilla.indexer.service.IndexShard;
import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.IndexerStats;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.IndexerStatsRequest;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Clock;

/** IndexerService: FindMatches straight on the lock-free index, Stats from the applier's counters. */
public final class IndexerGrpcService extends IndexerServiceGrpc.IndexerServiceImplBase {

    /** Longest query accepted (blocks); longer prompts are cut, which only under-reports overlap. */
    static final int MAX_QUERY_BLOCKS = 1 << 16;

    private final IndexService index;
    private final Clock clock;
    private final Timer findMatchesTimer;

    public IndexerGrpcService(IndexService index, Clock clock, MeterRegistry registry) {
        this.index = index;
        this.clock = clock;
        this.findMatchesTimer = Timer.builder("flotilla.indexer.find_matches")
                .description("FindMatches latency inside the indexer")
                .publishPercentiles(0.5, 0.99)
                .register(registry);
    }

    @Override
    public void findMatches(FindMatchesRequest request, StreamObserver<FindMatchesResponse> observer) {
        if (request.getBlockSize() < 0) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription("block_size must not be negative").asRuntimeException());
            return;
        }
        int n = Math.min(request.getSeqHashesCount(), MAX_QUERY_BLOCKS);
        long[] hashes = new long[n];
        for (int i = 0; i < n; i++) {
            hashes[i] = request.getSeqHashes(i);
        }
        long start = System.nanoTime();
        FindMatchesResponse.Builder resp = FindMatchesResponse.newBuilder();
        for (WorkerMatch m : index.findMatches(request.getModel(), request.getBlockSize(), hashes)) {
            resp.addMatchesBuilder().setWorkerId(m.workerId()).setMatchedBlocks(m.matchedBlocks())
                    .setPrefixDeviceBlocks(m.deviceBlocks()).setPrefixHostBlocks(m.hostBlocks())
                    .setPrefixDiskBlocks(m.diskBlocks());
        }
        findMatchesTimer.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        long last = index.applier().lastAppliedAtMs();
        resp.setIndexAgeMs(last <= 0 ? -1 : clock.millis() - last);
        IndexShard.Coverage coverage = index.coverage();
        if (coverage != null) {
            resp.addAllPartitions(coverage.partitions()).setPartitionCount(coverage.count());
        }
        observer.onNext(resp.build());
        observer.onCompleted();
    }

    @Override
    public void stats(IndexerStatsRequest request, StreamObserver<IndexerStats> observer) {
        ApplierStats s = index.applier().stats();
        observer.onNext(IndexerStats.newBuilder()
                .setTotalBlocks(index.applier().index().residentPairs())
                .setHostBlocks(index.applier().index().residentPairs(KvTier.KV_TIER_HOST))
                .setDiskBlocks(index.applier().index().residentPairs(KvTier.KV_TIER_DISK))
                .setWorkers(index.applier().workers().size())
                .setEventsApplied(s.eventsApplied())
                .setDuplicates(s.duplicates())
                .setGaps(s.gaps())
                .setReconciliations(s.reconciliationsApplied())
                .setSnapshotAgeMs(index.snapshotAgeMs())
                .setConsumerLag(index.consumerLag())
                .build());
        observer.onCompleted();
    }
}
