package io.flotilla.worker.kv;

import io.flotilla.transfer.Backend;
import io.flotilla.transfer.ErrorCode;
import io.flotilla.transfer.MemoryKind;
import io.flotilla.transfer.MemoryRegion;
import io.flotilla.transfer.Registration;
import io.flotilla.transfer.TransferAgent;
import io.flotilla.transfer.TransferException;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Where the engine's KV regions live. A /dev/shm too small for the pool (a container's default
 * 64 MiB against a 128 MiB simulated pool) must not stop the worker: regions that do not fit become
 * direct memory, which decode workers read over tcp.
 */
class KvRegionsTest {

    /** An agent with tcp + shm whose shared memory holds {@code sharedRegions} allocations. */
    private static final class FakeAgent {
        final List<String> calls = new ArrayList<>();
        int sharedLeft;
        ErrorCode failure = ErrorCode.NO_MEMORY;
        long nextId = 1;

        FakeAgent(int sharedRegions) {
            this.sharedLeft = sharedRegions;
        }

        TransferAgent proxy() {
            return (TransferAgent) Proxy.newProxyInstance(TransferAgent.class.getClassLoader(),
                    new Class<?>[]{TransferAgent.class}, (p, m, args) -> switch (m.getName()) {
                        case "enabledBackends" -> Set.of(Backend.TCP, Backend.SHM);
                        case "name" -> "fake";
                        case "allocateShared" -> {
                            calls.add("allocateShared");
                            if (sharedLeft-- <= 0) {
                                throw new TransferException(failure, "shm_open: no space left in /dev/shm");
                            }
                            long len = (Long) args[0];
                            yield new Registration("fake", nextId++, 0, len, MemoryKind.DRAM, true,
                                    Optional.of(ByteBuffer.allocateDirect((int) len)));
                        }
                        case "register" -> {
                            calls.add("register");
                            MemoryRegion region = (MemoryRegion) args[0];
                            yield new Registration("fake", nextId++, region.address(), region.length(), MemoryKind.DRAM,
                                    false, region.buffer());
                        }
                        case "toString" -> "FakeAgent";
                        default -> throw new UnsupportedOperationException(m.getName());
                    });
        }
    }

    @Test
    void regionsThatDoNotFitInSharedMemoryBecomeDirectMemoryAndLaterOnesDoNotRetry() {
        FakeAgent fake = new FakeAgent(2);
        KvRegions regions = new KvRegions(fake.proxy());

        for (int r = 0; r < 4; r++) {
            assertThat(regions.region(r, 4096).capacity()).isEqualTo(4096);
        }

        assertThat(regions.isShared(0)).isTrue();
        assertThat(regions.isShared(1)).isTrue();
        assertThat(regions.isShared(2)).as("did not fit: direct memory, read over tcp").isFalse();
        assertThat(regions.isShared(3)).isFalse();
        assertThat(fake.calls).containsExactly("allocateShared", "allocateShared", "allocateShared", "register", "register");
        assertThat(regions.count()).isEqualTo(4);
        assertThat(regions.registrationId(2)).isNotEqualTo(regions.registrationId(3));
    }

    @Test
    void otherTransferFailuresStillFail() {
        FakeAgent fake = new FakeAgent(0);
        fake.failure = ErrorCode.CLOSED;
        KvRegions regions = new KvRegions(fake.proxy());

        assertThatThrownBy(() -> regions.region(0, 4096)).isInstanceOf(TransferException.class);
        assertThat(regions.count()).isZero();
    }
}
