package io.flotilla.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flotilla.transfer.bench.PeerProcess;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real cross-process case: the target agent lives in a child JVM. The native peer serves shm
 * and tcp (and ucx when built); the other child runs with the native library disabled, so its AUTO
 * agent falls back to the Java engine. This JVM writes, reads back, and asks the peer what it holds.
 */
class CrossProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int REGION = 8 << 20;
    private static Peer nativePeer;
    private static Peer javaPeer;

    @BeforeAll
    static void startPeers() throws Exception {
        if (TransferAgent.nativeLoaded()) {
            nativePeer = new Peer("peer-native", "native", "all", REGION);
        }
        // the fallback: this child cannot load the native library, so its AUTO agent gets the Java engine
        javaPeer = new Peer("peer-java", "auto", "tcp", REGION, "-Dflotilla.transfer.native=false");
    }

    @AfterAll
    static void stopPeers() throws Exception {
        if (nativePeer != null) {
            nativePeer.close();
        }
        javaPeer.close();
    }

    private static void roundTrip(Peer peer, TransferAgent agent, String peerName, Backend expected, long seed) throws Exception {
        assertThat(agent.loadRemoteMetadata(peer.metadata)).isEqualTo(peerName);
        ByteBuffer local = ByteBuffer.allocateDirect(REGION);
        Registration reg = agent.register(MemoryRegion.of(local));
        assertThat(peer.load(agent.localMetadata())).isEqualTo(agent.name());

        int size = (4 << 20) + 5, at = 12345;
        PeerProcess.fill(local, 0, size, seed);
        try (TransferRequest w = agent.write(peerName, XferDescList.of().add(reg, 0, size), XferDescList.of().add(peer.regionId, at, size),
                ("wrote " + seed).getBytes(StandardCharsets.UTF_8))) {
            w.awaitDone(WAIT);
            assertThat(w.backend()).isEqualTo(expected);
        }
        assertThat(peer.crc(at, size)).as("peer's bytes").isEqualTo(PeerProcess.crc(local, 0, size));
        assertThat(peer.notifications()).containsExactly(agent.name() + ":wrote " + seed);

        peer.call("FILL 0 " + REGION + " " + (seed + 1));
        XferDescList l = XferDescList.of(), r = XferDescList.of();
        for (int i = 0; i < 64; i++) { // gather 64 scattered 16 KiB blocks, in reverse order
            l.add(reg, i * 16384L, 16384);
            r.add(peer.regionId, (63 - i) * 65536L + 100, 16384);
        }
        agent.read(peerName, l, r, null).awaitDone(WAIT);
        for (int i = 0; i < 64; i++) {
            long remoteOffset = (63 - i) * 65536L + 100;
            for (int k = 0; k < 16384; k += 4093) {
                assertThat(local.get(i * 16384 + k)).isEqualTo(PeerProcess.patternByte(seed + 1, remoteOffset + k));
            }
        }
        assertThat(peer.crc(0, 16384)).isNotEqualTo(0);

        peer.call("NOTIFY " + agent.name() + " " + java.util.Base64.getEncoder().encodeToString("from the child".getBytes(StandardCharsets.UTF_8)));
        assertThat(agent.pollNotifications()).containsExactly(new Notification(peerName, "from the child".getBytes(StandardCharsets.UTF_8)));
        agent.deregister(reg);
    }

    @Test
    void nativeShmToAChildProcess() throws Exception {
        assumeTrue(nativePeer != null, "native library not loaded");
        try (TransferAgent agent = TransferAgent.create("parent-shm", TransferConfig.defaults().withImplementation(Implementation.NATIVE).withBackends(Backend.SHM))) {
            roundTrip(nativePeer, agent, "peer-native", Backend.SHM, 100);
        }
    }

    @Test
    void nativeTcpToAChildProcess() throws Exception {
        assumeTrue(nativePeer != null, "native library not loaded");
        try (TransferAgent agent = TransferAgent.create("parent-tcp", TransferConfig.defaults().withImplementation(Implementation.NATIVE).withBackends(Backend.TCP))) {
            roundTrip(nativePeer, agent, "peer-native", Backend.TCP, 200);
        }
    }

    @Test
    void javaEngineToANativeChildProcess() throws Exception {
        assumeTrue(nativePeer != null, "native library not loaded");
        try (TransferAgent agent = TransferAgent.create("parent-java", TransferConfig.defaults().withImplementation(Implementation.JAVA))) {
            roundTrip(nativePeer, agent, "peer-native", Backend.TCP, 300);
        }
    }

    @Test
    void childWithoutTheNativeLibraryFallsBackToTheJavaEngineAndServesBothEngines() throws Exception {
        assertThat(javaPeer.engine).isEqualTo(Implementation.JAVA);
        if (nativePeer != null) {
            assertThat(nativePeer.engine).isEqualTo(Implementation.NATIVE);
        }
        try (TransferAgent agent = TransferAgent.create("parent-auto", TransferConfig.defaults())) {
            roundTrip(javaPeer, agent, "peer-java", Backend.TCP, 400);
        }
        try (TransferAgent agent = TransferAgent.create("parent-java2", TransferConfig.defaults().withImplementation(Implementation.JAVA))) {
            roundTrip(javaPeer, agent, "peer-java", Backend.TCP, 500);
        }
    }
}
