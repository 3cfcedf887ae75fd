package io.flotilla.indexer.core;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Restoring 1 M resident pairs (64 workers, no sharing) from an {@link IndexSnapshot}: from the
 * in-memory form, and from its {@link IndexSnapshotCodec} bytes (decode + restore). Also the export.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@State(Scope.Benchmark)
public class RestoreBenchmark {

    private IndexSnapshot snapshot;
    private byte[] encoded;
    private KvEventApplier filled;

    @Setup(Level.Trial)
    public void build() throws IOException {
        snapshot = IndexFixtures.snapshot("unique");
        ByteArrayOutputStream out = new ByteArrayOutputStream(9 << 20);
        IndexSnapshotCodec.write(snapshot, out);
        encoded = out.toByteArray();
        filled = restore();
        System.out.printf("%n[restore] %d pairs, %d bytes encoded (%.2f bytes/pair)%n", snapshot.blocks(),
                encoded.length, (double) encoded.length / snapshot.blocks());
    }

    @Benchmark
    public KvEventApplier restore() {
        KvEventApplier applier = new KvEventApplier(new PrefixIndex(), ApplierSettings.defaults());
        applier.importSnapshot(snapshot, 0);
        return applier;
    }

    @Benchmark
    public KvEventApplier decodeAndRestore() throws IOException {
        KvEventApplier applier = new KvEventApplier(new PrefixIndex(), ApplierSettings.defaults());
        applier.importSnapshot(IndexSnapshotCodec.read(new ByteArrayInputStream(encoded)), 0);
        return applier;
    }

    @Benchmark
    public IndexSnapshot export() {
        return filled.exportSnapshot(0);
    }
}
