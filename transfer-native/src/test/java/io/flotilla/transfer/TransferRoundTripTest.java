package io.flotilla.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flotilla.transfer.bench.PeerProcess;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Byte-exact reads and writes on every available backend and engine pairing, two agents in this JVM. */
class TransferRoundTripTest {

    private static final int MAX = 64 << 20;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static ByteBuffer src;
    private static ByteBuffer dst;

    @BeforeAll
    static void buffers() {
        src = ByteBuffer.allocateDirect(MAX);
        dst = ByteBuffer.allocateDirect(MAX);
    }

    @AfterAll
    static void release() {
        src = null;
        dst = null;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void writesAndReadsBackByteExactFromOneByteTo64MiB(Setup setup) throws Exception {
        assumeTrue(setup.available(), setup + " not available in this build");
        try (Setup.AgentPair p = setup.open("sizes")) {
            Registration local = p.initiator().register(MemoryRegion.of(src));
            Registration back = p.initiator().register(MemoryRegion.of(dst));
            Registration remote = p.target().allocateShared(MAX);
            p.exchange();
            ByteBuffer remoteView = remote.requireBuffer();
            for (int size : new int[] {1, 4097, (1 << 20) + 3, MAX}) {
                int offset = size == MAX ? 0 : 4093;
                PeerProcess.fill(src, 0, size, size);
                try (TransferRequest w = p.initiator().write(p.targetName(), XferDescList.of().add(local, 0, size),
                        XferDescList.of().add(remote, offset, size), null)) {
                    w.awaitDone(WAIT);
                    assertThat(w.backend()).isEqualTo(setup.backend);
                }
                assertThat(remoteView.slice(offset, size).mismatch(src.slice(0, size))).as("target bytes after write of %d", size).isEqualTo(-1);
                PeerProcess.fill(dst, 0, size, size + 1); // something else, so a no-op read cannot pass
                try (TransferRequest r = p.initiator().read(p.targetName(), XferDescList.of().add(back, 0, size),
                        XferDescList.of().add(remote, offset, size), null)) {
                    r.awaitDone(WAIT);
                }
                assertThat(dst.slice(0, size).mismatch(src.slice(0, size))).as("bytes read back, %d", size).isEqualTo(-1);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void movesTwoThousandDescriptorsInOneRequest(Setup setup) throws Exception {
        assumeTrue(setup.available(), setup + " not available in this build");
        int n = 2000, slot = 8192;
        try (Setup.AgentPair p = setup.open("many")) {
            Registration local = p.initiator().register(MemoryRegion.of(src));
            Registration back = p.initiator().register(MemoryRegion.of(dst));
            Registration remote = setup.targetRegion(p.target(), n * slot);
            p.exchange();
            Random rnd = new Random(42);
            List<Integer> slots = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                slots.add(i);
            }
            Collections.shuffle(slots, rnd);
            XferDescList l = XferDescList.of(), r = XferDescList.of(), b = XferDescList.of();
            int[] len = new int[n];
            long localOffset = 0;
            for (int i = 0; i < n; i++) {
                len[i] = 1 + rnd.nextInt(slot - 1);
                l.add(local, localOffset, len[i]);
                b.add(back, localOffset, len[i]);
                r.add(remote, (long) slots.get(i) * slot + (slot - len[i]) / 2, len[i]);
                localOffset += len[i];
            }
            PeerProcess.fill(src, 0, (int) localOffset, 5);
            p.initiator().write(p.targetName(), l, r, null).awaitDone(WAIT);
            ByteBuffer view = remote.requireBuffer();
            for (int i = 0; i < n; i++) {
                XferDescList.Desc ld = l.get(i), rd = r.get(i);
                assertThat(view.slice((int) rd.offset(), len[i]).mismatch(src.slice((int) ld.offset(), len[i]))).as("descriptor %d", i).isEqualTo(-1);
            }
            PeerProcess.fill(dst, 0, (int) localOffset, 6);
            p.initiator().read(p.targetName(), b, r, null).awaitDone(WAIT);
            assertThat(dst.slice(0, (int) localOffset).mismatch(src.slice(0, (int) localOffset))).isEqualTo(-1);
        }
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void concurrentRequestsFromFourThreadsStayApart(Setup setup) throws Exception {
        assumeTrue(setup.available(), setup + " not available in this build");
        int threads = 4, rounds = 20, block = 64 * 1024, blocksPerRequest = 8;
        int perThread = block * blocksPerRequest;
        try (Setup.AgentPair p = setup.open("concurrent")) {
            Registration local = p.initiator().register(MemoryRegion.of(src));
            Registration back = p.initiator().register(MemoryRegion.of(dst));
            Registration remote = setup.targetRegion(p.target(), threads * perThread);
            p.exchange();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int base = t * perThread;
                    results.add(pool.submit(() -> {
                        int verified = 0;
                        for (int round = 0; round < rounds; round++) {
                            XferDescList l = XferDescList.of(), r = XferDescList.of(), b = XferDescList.of();
                            for (int k = 0; k < blocksPerRequest; k++) {
                                int rk = (k * 3 + round) % blocksPerRequest; // a different scatter every round
                                l.add(local, base + (long) k * block, block);
                                b.add(back, base + (long) k * block, block);
                                r.add(remote, base + (long) rk * block, block);
                            }
                            PeerProcess.fill(src, base, perThread, base * 31L + round);
                            try (TransferRequest w = p.initiator().write(p.targetName(), l, r, null)) {
                                w.awaitDone(WAIT);
                            }
                            try (TransferRequest rd = p.initiator().read(p.targetName(), b, r, null)) {
                                rd.awaitDone(WAIT);
                            }
                            if (dst.slice(base, perThread).mismatch(src.slice(base, perThread)) == -1) {
                                verified++;
                            }
                        }
                        return verified;
                    }));
                }
                for (Future<Integer> f : results) {
                    assertThat(f.get()).isEqualTo(rounds);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void notificationsArriveWithTheirTransfersAndInOrder(Setup setup) throws Exception {
        assumeTrue(setup.available(), setup + " not available in this build");
        try (Setup.AgentPair p = setup.open("notify")) {
            Registration local = p.initiator().register(MemoryRegion.of(src));
            Registration remote = setup.targetRegion(p.target(), 1 << 20);
            p.exchange();
            XferDescList l = XferDescList.of().add(local, 0, 4096), r = XferDescList.of().add(remote, 0, 4096);

            p.initiator().write(p.targetName(), l, r, utf8("blocks 1-4 written")).awaitDone(WAIT);
            // contract: the notification is queued before the request reports DONE
            assertThat(p.target().pollNotifications()).containsExactly(new Notification(p.initiator().name(), utf8("blocks 1-4 written")));

            p.initiator().read(p.targetName(), l, r, utf8("lease 7 released")).awaitDone(WAIT);
            assertThat(p.target().pollNotifications()).containsExactly(new Notification(p.initiator().name(), utf8("lease 7 released")));

            List<Notification> expected = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                p.initiator().sendNotification(p.targetName(), utf8("n" + i));
                expected.add(new Notification(p.initiator().name(), utf8("n" + i)));
            }
            assertThat(p.target().pollNotifications()).containsExactlyElementsOf(expected);
            assertThat(p.target().pollNotifications()).isEmpty();

            p.target().sendNotification(p.initiator().name(), new byte[0]);
            p.target().sendNotification(p.initiator().name(), new byte[70_000]);
            assertThat(p.initiator().pollNotifications()).extracting(n -> n.payload().length).containsExactly(0, 70_000);
        }
    }
}
