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

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * Host-tier copy throughput against single-thread memcpy, for 256 KiB blocks (one thread).
 *
 * <ul>
 *   <li>{@code memcpy}: {@code ByteBuffer.put} between two fixed direct buffers (Unsafe.copyMemory, the
 *       JVM's memcpy), source and destination cycling through 256 MiB so the caches do not help;</li>
 *   <li>{@code offloadCopy}: the host tier's device→host write ({@link HostMemory#write}, slot lookup and
 *       slice included) over the same working set;</li>
 *   <li>{@code offloadCopyAndChecksum}: what an offload costs the tier thread in full: the copy plus the
 *       CRC32C the tier keeps to verify the block when it is onboarded;</li>
 *   <li>{@code onboardCopyAndVerify}: host→device copy plus the CRC32C check.</li>
 * </ul>
 * Throughput = blocks/s × 256 KiB. Run: {@code ./mvnw -pl worker-agent -Pjmh test-compile exec:exec
 * -Djmh.args="HostCopyBenchmark -f 1 -wi 3 -i 5 -w 2s -r 2s"}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class HostCopyBenchmark {

    @Param("262144")
    int blockBytes;

    private static final long WORKING_SET = 256L << 20;

    private int slots;
    private ByteBuffer[] device;
    private ByteBuffer deviceSlab;
    private ByteBuffer hostSlab;
    private HostMemory host;
    private final CRC32C crc = new CRC32C();
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        slots = (int) (WORKING_SET / blockBytes);
        deviceSlab = ByteBuffer.allocateDirect((int) WORKING_SET);
        hostSlab = ByteBuffer.allocateDirect((int) WORKING_SET);
        device = new ByteBuffer[slots];
        for (int i = 0; i < slots; i++) {
            device[i] = deviceSlab.slice(i * blockBytes, blockBytes);
            for (int b = 0; b < blockBytes; b += 8) {
                device[i].putLong(b, i * 31L + b);
            }
        }
        host = new HostMemory(slots, blockBytes);
        for (int i = 0; i < slots; i++) {
            host.write(i, device[i]); // allocate and touch every slab outside the measurement
        }
    }

    private int slot() {
        int s = next;
        next = next + 1 == slots ? 0 : next + 1;
        return s;
    }

    @Benchmark
    public ByteBuffer memcpy() {
        int s = slot();
        ByteBuffer dst = hostSlab.slice(s * blockBytes, blockBytes);
        return dst.put(device[s].duplicate());
    }

    @Benchmark
    public int offloadCopy() {
        int s = slot();
        host.write(s, device[s]);
        return s;
    }

    @Benchmark
    public long offloadCopyAndChecksum() {
        int s = slot();
        host.write(s, device[s]);
        crc.reset();
        crc.update(host.view(s));
        return crc.getValue();
    }

    @Benchmark
    public long onboardCopyAndVerify() {
        int s = slot();
        ByteBuffer dst = device[s].duplicate();
        dst.put(host.view(s));
        crc.reset();
        crc.update(device[s].duplicate());
        return crc.getValue();
    }
}
