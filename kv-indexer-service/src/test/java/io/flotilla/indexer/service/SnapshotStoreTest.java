package io.flotilla.indexer.service;

import io.flotilla.indexer.core.IndexSnapshot;
import io.flotilla.indexer.core.WorkerSnapshot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SnapshotStoreTest {

    private static IndexSnapshot snapshot(long at, long... hashes) {
        return new IndexSnapshot(at, List.of(new WorkerSnapshot("w0", 42L, 7, at, true, hashes)));
    }

    @Test
    void roundTripsIndexAndOffsets(@TempDir Path dir) throws Exception {
        SnapshotStore store = new SnapshotStore(dir, 3);
        store.write(snapshot(1000, 1L, -2L, Long.MIN_VALUE), Map.of(0, 5L, 3, 17L));
        SnapshotStore.Stored back = store.loadNewest().orElseThrow();
        assertThat(back.offsets()).containsExactlyInAnyOrderEntriesOf(Map.of(0, 5L, 3, 17L));
        assertThat(back.index().workers().get(0).seqHashes()).containsExactly(1L, -2L, Long.MIN_VALUE);
        assertThat(back.index().workers().get(0).lastSeq()).isEqualTo(7);
    }

    @Test
    void aCorruptNewestSnapshotIsSkippedAndCounted(@TempDir Path dir) throws Exception {
        SnapshotStore store = new SnapshotStore(dir, 3);
        store.write(snapshot(1000, 1L), Map.of(0, 1L));
        Path newest = store.write(snapshot(2000, 2L), Map.of(0, 2L));
        try (RandomAccessFile f = new RandomAccessFile(newest.toFile(), "rw")) {
            f.seek(f.length() - 3);
            f.write(0x5a);
        }
        SnapshotStore.Stored back = store.loadNewest().orElseThrow();
        assertThat(back.index().takenAtMs()).isEqualTo(1000);
        assertThat(store.corruptSnapshots()).isEqualTo(1);
    }

    @Test
    void truncatedAndForeignFilesAreRejected(@TempDir Path dir) throws Exception {
        SnapshotStore store = new SnapshotStore(dir, 3);
        Path f = store.write(snapshot(1000, 1L, 2L), Map.of());
        byte[] all = Files.readAllBytes(f);
        Files.write(dir.resolve("index-3000.snap"), java.util.Arrays.copyOf(all, all.length - 4));
        Files.writeString(dir.resolve("index-4000.snap"), "hello");
        assertThat(store.loadNewest().orElseThrow().index().takenAtMs()).isEqualTo(1000);
        assertThat(store.corruptSnapshots()).isEqualTo(2);
    }

    @Test
    void keepsOnlyTheNewestFiles(@TempDir Path dir) throws Exception {
        SnapshotStore store = new SnapshotStore(dir, 2);
        for (int i = 1; i <= 4; i++) {
            store.write(snapshot(i * 1000L, i), Map.of());
        }
        assertThat(store.files()).extracting(p -> p.getFileName().toString())
                .containsExactly("index-4000.snap", "index-3000.snap");
    }
}
