package io.flotilla.transfer;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code allocateShared} reserves the tmpfs pages of its segment: memory that {@code /dev/shm} cannot
 * hold is refused when it is allocated ({@code NO_MEMORY}), not handed out to fault with SIGBUS at the
 * first write past the free space (what a container's default 64 MiB {@code /dev/shm} did to a worker
 * whose 128 MiB KV pool outgrew it).
 */
class SharedAllocationTest {

    private static final Path DEV_SHM = Path.of("/dev/shm");

    @Test
    void moreThanDevShmHoldsIsRefusedAtAllocation() throws IOException {
        assumeTrue(TransferAgent.nativeLoaded(), "needs the native library");
        assumeTrue(Files.isDirectory(DEV_SHM), "needs /dev/shm");
        FileStore store = Files.getFileStore(DEV_SHM);
        // An unlimited tmpfs reports no size; nothing to overrun there.
        assumeTrue(store.getTotalSpace() > 0, "/dev/shm has no size limit");
        // Past the tmpfs' size the kernel refuses the reservation at once (shmem_fallocate checks the
        // length against the size before allocating a page), so this costs no memory.
        long tooMuch = store.getTotalSpace() + (4L << 20);

        try (TransferAgent agent = TransferAgent.create("shm-overrun",
                TransferConfig.defaults().withImplementation(Implementation.NATIVE).withBackends(Backend.TCP, Backend.SHM))) {
            assertThatThrownBy(() -> agent.allocateShared(tooMuch))
                    .isInstanceOfSatisfying(TransferException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.NO_MEMORY))
                    .hasMessageContaining("/dev/shm");

            Registration small = agent.allocateShared(1 << 20);
            assertThat(small.requireBuffer().get(0)).as("still allocates what fits, zeroed").isZero();
            agent.deregister(small);
        }
        try (var left = Files.list(DEV_SHM)) {
            assertThat(left.map(p -> p.getFileName().toString()))
                    .as("the refused segment was unlinked")
                    .noneMatch(n -> n.startsWith("flotilla-" + ProcessHandle.current().pid() + "-"));
        }
    }
}
