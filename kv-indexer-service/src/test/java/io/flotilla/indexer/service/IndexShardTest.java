package io.flotilla.indexer.service;

import io.flotilla.indexer.core.IndexSnapshot;
import io.flotilla.indexer.core.WorkerSnapshot;
import io.flotilla.protocol.kafka.WorkerPartitions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** A shard's rebuild for a new assignment: kept partitions as they are, new ones from their snapshots, lost ones gone. */
class IndexShardTest {

    private static final int PARTITIONS = 8;

    @TempDir
    Path dir;

    /** The first worker id ({@code w-<n>}) whose records land on {@code partition}. */
    private static String workerOf(int partition) {
        for (int i = 0; ; i++) {
            if (WorkerPartitions.of("w-" + i, PARTITIONS) == partition) {
                return "w-" + i;
            }
        }
    }

    private static WorkerSnapshot worker(int partition, long... blocks) {
        return new WorkerSnapshot(workerOf(partition), 1, blocks.length, 0, true, blocks);
    }

    private static List<String> ids(IndexSnapshot s) {
        return s.workers().stream().map(WorkerSnapshot::workerId).sorted().toList();
    }

    @Test
    void keptPartitionsStayNewOnesComeFromTheirSnapshotsOrTheStartAndLostOnesAreDropped() throws Exception {
        // another shard owned partitions 1 and 2 and wrote their snapshots (partition 1 at offset 40, 2 at 7)
        IndexShard other = new IndexShard(dir, 3);
        other.rebuild(new IndexSnapshot(0, List.of()), Map.of(), Set.of(1, 2), PARTITIONS, false, 0);
        other.write(other.split(new IndexSnapshot(5, List.of(worker(1, 11, 12), worker(2, 21))), Map.of(1, 40L, 2, 7L)));
        assertThat(dir.resolve("partition-1")).isDirectory();

        IndexShard shard = new IndexShard(dir, 3);
        IndexShard.Rebuilt first = shard.rebuild(new IndexSnapshot(10, List.of()), Map.of(), Set.of(0, 1), PARTITIONS,
                false, 10);
        assertThat(ids(first.index())).containsExactly(workerOf(1));
        assertThat(first.offsets()).isEqualTo(Map.of(1, 40L)); // partition 0 has no snapshot: from the start
        shard.publish();
        assertThat(shard.coverage()).isEqualTo(new IndexShard.Coverage(List.of(0, 1), PARTITIONS));
        assertThat(shard.owns(workerOf(0))).isTrue();
        assertThat(shard.owns(workerOf(2))).isFalse();

        // the shard applied more of partitions 0 and 1; now it keeps 1, loses 0 and gains 2
        IndexSnapshot current = new IndexSnapshot(20, List.of(worker(0, 1), worker(1, 11, 12, 13)));
        IndexShard.Rebuilt second = shard.rebuild(current, Map.of(0, 3L, 1, 52L), Set.of(1, 2), PARTITIONS, false, 20);
        assertThat(ids(second.index())).containsExactlyInAnyOrder(workerOf(1), workerOf(2));
        assertThat(second.index().workers().stream().filter(w -> w.workerId().equals(workerOf(1))).findFirst()
                .orElseThrow().seqHashes()).containsExactly(11, 12, 13); // kept as it is, not from the older snapshot
        assertThat(second.offsets()).isEqualTo(Map.of(1, 52L, 2, 7L));
        assertThat(shard.ownsPartition(0)).isFalse();
    }

    @Test
    void aRebuildFromScratchIgnoresSnapshotsAndCurrentContent() throws Exception {
        IndexShard shard = new IndexShard(dir, 3);
        shard.rebuild(new IndexSnapshot(0, List.of()), Map.of(), Set.of(3), PARTITIONS, false, 0);
        shard.write(shard.split(new IndexSnapshot(1, List.of(worker(3, 5))), Map.of(3, 9L)));
        IndexShard.Rebuilt again = shard.rebuild(new IndexSnapshot(2, List.of(worker(3, 5))), Map.of(3, 9L), Set.of(3),
                PARTITIONS, true, 2);
        assertThat(again.index().workers()).isEmpty();
        assertThat(again.offsets()).isEmpty();
    }

    @Test
    void theSplitPutsEachWorkerInItsPartitionAndEveryOwnedPartitionGetsAFile() {
        IndexShard shard = new IndexShard(dir, 3);
        shard.rebuild(new IndexSnapshot(0, List.of()), Map.of(), Set.of(4, 5, 6), PARTITIONS, false, 0);
        List<WorkerSnapshot> all = new ArrayList<>(List.of(worker(4, 1), worker(6, 2)));
        Map<Integer, IndexShard.Rebuilt> parts = shard.split(new IndexSnapshot(3, all), Map.of(4, 10L, 6, 12L));
        assertThat(parts).containsOnlyKeys(4, 5, 6);
        assertThat(ids(parts.get(4).index())).containsExactly(workerOf(4));
        assertThat(parts.get(5).index().workers()).isEmpty();
        assertThat(parts.get(5).offsets()).isEmpty();
        assertThat(parts.get(6).offsets()).isEqualTo(Map.of(6, 12L));
    }
}
