package io.flotilla.indexer.core;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;

import static io.flotilla.indexer.core.KvInputs.batch;
import static io.flotilla.indexer.core.KvInputs.stored;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IndexSnapshotTest {

    static final ApplierSettings SETTINGS = ApplierSettings.defaults();

    @Test
    void exportThenImportRestoresWorkersBlocksAndCursors() throws IOException {
        KvEventApplier source = new KvEventApplier(new PrefixIndex(), SETTINGS);
        source.onStatus(KvInputs.ready("a", 11, 0, 5000), 0);
        source.onBatch(batch("a", 11, 1, 0, stored(1, 2, 3)), 0);
        source.onBatch(batch("b", -7, 1, 0, stored(0, 2, -1)), 0);
        source.onBatch(batch("b", -7, 3, 0, stored(9)), 0);      // gap: b is unverified
        source.onBatch(batch("c", 5, 1, 0, stored(4)), 0);
        source.onStatus(KvInputs.stopped("c", 5, 1), 1);          // c is gone: not exported

        IndexSnapshot exported = source.exportSnapshot(2);
        assertThat(exported.workers()).extracting(WorkerSnapshot::workerId).containsExactlyInAnyOrder("a", "b");
        assertThat(exported.blocks()).isEqualTo(6);

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        IndexSnapshotCodec.write(exported, bytes);
        assertThat(bytes.size()).isLessThan(6 * 8 + 200);
        IndexSnapshot read = IndexSnapshotCodec.read(new ByteArrayInputStream(bytes.toByteArray()));

        KvEventApplier restored = new KvEventApplier(new PrefixIndex(), SETTINGS);
        List<ReconcileRequest> again = restored.importSnapshot(read, 100);
        assertThat(again).containsExactly(new ReconcileRequest("b", -7, 1, ReconcileRequest.Reason.RESTORED));

        WorkerView a = restored.worker("a").orElseThrow();
        assertThat(a.state()).isEqualTo(WorkerState.LIVE);
        assertThat(a.epoch()).isEqualTo(11);
        assertThat(a.lastSeq()).isEqualTo(1);
        assertThat(a.leaseDeadlineMs()).isEqualTo(100 + SETTINGS.provisionalLeaseMs());
        assertThat(restored.index().blocksOf("a")).containsExactlyInAnyOrder(1, 2, 3);
        assertThat(restored.index().blocksOf("b")).containsExactlyInAnyOrder(0, 2, -1);
        assertThat(restored.worker("b").orElseThrow().state()).isEqualTo(WorkerState.UNVERIFIED);
        assertThat(restored.index().xorDigest("b")).isEqualTo(source.index().xorDigest("b"));
        assertThat(restored.index().findMatches(new long[]{0, 2, -1}))
                .isEqualTo(source.index().findMatches(new long[]{0, 2, -1}));

        // the restored cursor keeps deduplicating: seq 1 of a is old news
        assertThat(restored.onBatch(batch("a", 11, 1, 0, stored(8)), 100).verdict()).isEqualTo(Verdict.DUPLICATE);
        assertThat(restored.onBatch(batch("a", 11, 2, 0, stored(8)), 100).verdict()).isEqualTo(Verdict.APPLIED);
    }

    @Test
    void codecRoundTripsLargeArraysAcrossChunks() throws IOException {
        long[] many = new long[20_000];
        for (int i = 0; i < many.length; i++) {
            many[i] = IndexSimulation.mix(i);
        }
        IndexSnapshot s = new IndexSnapshot(42, List.of(new WorkerSnapshot("w-é", 1, 2, 3, true, many),
                new WorkerSnapshot("empty", 4, 5, Long.MIN_VALUE, false, new long[0])));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        IndexSnapshotCodec.write(s, bytes);
        IndexSnapshot back = IndexSnapshotCodec.read(new ByteArrayInputStream(bytes.toByteArray()));
        assertThat(back.takenAtMs()).isEqualTo(42);
        assertThat(back.workers()).hasSize(2);
        assertThat(back.workers().get(0)).usingRecursiveComparison().isEqualTo(s.workers().get(0));
        assertThat(back.workers().get(1)).usingRecursiveComparison().isEqualTo(s.workers().get(1));
    }

    @Test
    void codecRoundTripsEveryTierAndRestoresThem() throws IOException {
        IndexSnapshot s = new IndexSnapshot(7, List.of(new WorkerSnapshot("a", 1, 2, 3, true, new long[]{1, 2},
                new long[]{3}, new long[]{4, 5})));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        IndexSnapshotCodec.write(s, bytes);
        IndexSnapshot back = IndexSnapshotCodec.read(new ByteArrayInputStream(bytes.toByteArray()));
        assertThat(back.workers().get(0)).usingRecursiveComparison().isEqualTo(s.workers().get(0));
        assertThat(back.blocks()).isEqualTo(5);

        KvEventApplier restored = new KvEventApplier(new PrefixIndex(), SETTINGS);
        restored.importSnapshot(back, 0);
        assertThat(restored.index().blocksOf("a", Tiers.HOST)).containsExactly(3);
        assertThat(restored.index().blocksOf("a", Tiers.DISK)).containsExactlyInAnyOrder(4, 5);
        assertThat(restored.exportSnapshot(0).workers().get(0).diskSeqHashes()).containsExactlyInAnyOrder(4, 5);
    }

    @Test
    void codecReadsVersion1SnapshotsAsDeviceOnly() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        java.io.DataOutputStream d = new java.io.DataOutputStream(bytes);
        d.writeInt(0x464C5849);
        d.writeInt(1);
        d.writeLong(9);
        d.writeInt(1);
        d.writeUTF("a");
        d.writeLong(1);
        d.writeLong(2);
        d.writeLong(3);
        d.writeBoolean(true);
        d.writeInt(1);
        d.write(new byte[]{7, 0, 0, 0, 0, 0, 0, 0});
        IndexSnapshot back = IndexSnapshotCodec.read(new ByteArrayInputStream(bytes.toByteArray()));
        assertThat(back.workers().get(0).seqHashes()).containsExactly(7);
        assertThat(back.workers().get(0).hostSeqHashes()).isEmpty();
    }

    @Test
    void codecRejectsForeignAndTruncatedInput() throws IOException {
        assertThatThrownBy(() -> IndexSnapshotCodec.read(new ByteArrayInputStream(new byte[]{1, 2, 3, 4, 5, 6, 7, 8})))
                .isInstanceOf(IOException.class);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        IndexSnapshotCodec.write(new IndexSnapshot(1, List.of(new WorkerSnapshot("a", 1, 1, 1, true, new long[]{1, 2}))), bytes);
        byte[] cut = java.util.Arrays.copyOf(bytes.toByteArray(), bytes.size() - 3);
        assertThatThrownBy(() -> IndexSnapshotCodec.read(new ByteArrayInputStream(cut))).isInstanceOf(IOException.class);
    }

    @Test
    void importRefusesANonEmptyApplier() {
        KvEventApplier a = new KvEventApplier(new PrefixIndex(), SETTINGS);
        a.onBatch(batch("a", 1, 1, 0, stored(1)), 0);
        assertThatThrownBy(() -> a.importSnapshot(new IndexSnapshot(0, List.of()), 0))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void exportCoversWorkersBeyondTheFirstGroupOf64() {
        KvEventApplier a = new KvEventApplier(new PrefixIndex(), SETTINGS);
        for (int w = 0; w < 70; w++) {
            a.onBatch(batch("w" + w, w + 1, 1, 0, stored(w, 1000 + w)), 0);
        }
        IndexSnapshot s = a.exportSnapshot(0);
        assertThat(s.workers()).hasSize(70);
        WorkerSnapshot w69 = s.workers().stream().filter(w -> w.workerId().equals("w69")).findFirst().orElseThrow();
        assertThat(w69.seqHashes()).containsExactlyInAnyOrder(69, 1069);
        assertThat(w69.epoch()).isEqualTo(70);
    }
}
