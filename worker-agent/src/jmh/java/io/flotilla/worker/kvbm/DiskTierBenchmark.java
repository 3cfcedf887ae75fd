package io.flotilla.worker.kvbm;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Disk tier throughput on this machine, one thread, 256 KiB blocks written to consecutive slots (the
 * tier hands out free slots in order, so a filling tier writes sequentially): {@code write} is
 * {@link DiskStore#write} (payload, then its 64-byte header) through the page cache, {@code read} is
 * {@link DiskStore#read} with its header and CRC32C checks. The tier is {@code slots × 256 KiB} (1 GiB
 * by default) in {@code java.io.tmpdir}. Throughput = ops/s × 256 KiB.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class DiskTierBenchmark {

    @Param("262144")
    int blockBytes;

    @Param("4096")
    int slots;

    private Path dir;
    private DiskStore disk;
    private ByteBuffer block;
    private ByteBuffer into;
    private int checksum;
    private int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("kvbm-disk-bench");
        disk = new DiskStore(dir, slots, blockBytes, 42);
        disk.rebuild();
        block = ByteBuffer.allocateDirect(blockBytes);
        for (int b = 0; b < blockBytes; b += 8) {
            block.putLong(b, b * 0x9E3779B97F4A7C15L);
        }
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(block.duplicate());
        checksum = (int) crc.getValue();
        into = ByteBuffer.allocateDirect(blockBytes);
        for (int s = 0; s < slots; s++) {
            disk.write(s, block, s, checksum); // create the segments and the blocks read() verifies
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        disk.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private int slot() {
        int s = next;
        next = next + 1 == slots ? 0 : next + 1;
        return s;
    }

    @Benchmark
    public int write() throws IOException {
        int s = slot();
        disk.write(s, block, s, checksum);
        return s;
    }

    @Benchmark
    public boolean read() throws IOException {
        int s = slot();
        return disk.read(s, s, checksum, into);
    }
}
