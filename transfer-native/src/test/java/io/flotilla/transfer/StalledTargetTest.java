package io.flotilla.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A target that accepts connections and never answers: the one worker blocks on the first
 * request, so the second is deterministically still queued when it is cancelled, and the first
 * ends with TIMEOUT after the I/O timeout.
 */
class StalledTargetTest {

    @ParameterizedTest
    @EnumSource(value = Implementation.class, names = {"NATIVE", "JAVA"})
    void queuedRequestCancelsAndStalledOneTimesOut(Implementation engine) throws Exception {
        assumeTrue(engine == Implementation.JAVA || TransferAgent.nativeLoaded());
        List<Socket> accepted = new CopyOnWriteArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                try {
                    for (;;) {
                        Socket s = silent.accept();
                        accepted.add(s);
                        InputStream in = s.getInputStream();
                        Thread reader = new Thread(() -> {
                            try {
                                in.transferTo(OutputSink.INSTANCE);
                            } catch (IOException ignored) {
                                // closed
                            }
                        });
                        reader.setDaemon(true);
                        reader.start();
                    }
                } catch (IOException ignored) {
                    // closed
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            AgentMetadata fake = new AgentMetadata("silent", 42, "elsewhere/host", Backend.TCP.bit(), "127.0.0.1", silent.getLocalPort(),
                    new byte[0], List.of(new AgentMetadata.Region(1, 1L << 40, 1 << 20, 0, false, "", new byte[0])));
            TransferConfig config = TransferConfig.defaults().withImplementation(engine).withBackends(Backend.TCP).withWorkerThreads(1)
                    .withIoTimeout(Duration.ofMillis(800));
            try (TransferAgent agent = TransferAgent.create("impatient-" + engine, config)) {
                Registration local = agent.register(MemoryRegion.of(ByteBuffer.allocateDirect(4096)));
                assertThat(agent.loadRemoteMetadata(fake.encode())).isEqualTo("silent");
                XferDescList l = XferDescList.of().add(local, 0, 4096), r = XferDescList.of().add(1, 0, 4096);
                TransferRequest first = agent.write("silent", l, r, null);
                TransferRequest second = agent.write("silent", l, r, null);

                assertThat(second.cancel()).isTrue();
                assertThat(second.status()).isEqualTo(TransferStatus.ERROR);
                assertThat(second.failure().orElseThrow().code()).isEqualTo(ErrorCode.CANCELLED);
                assertThat(second.cancel()).isFalse();

                assertThat(first.await(Duration.ofSeconds(20))).isEqualTo(TransferStatus.ERROR);
                assertThat(first.failure().orElseThrow().code()).isEqualTo(ErrorCode.TIMEOUT);
                assertThat(first.cancel()).as("a finished request cannot be cancelled").isFalse();
                first.close();
                second.close();
                assertThat(first.status()).isEqualTo(TransferStatus.ERROR); // still answers after close
            }
        } finally {
            for (Socket s : accepted) {
                s.close();
            }
        }
    }

    /** Discards what the initiator sends. */
    private static final class OutputSink extends java.io.OutputStream {
        static final OutputSink INSTANCE = new OutputSink();

        @Override
        public void write(int b) {
        }

        @Override
        public void write(byte[] b, int off, int len) {
        }
    }
}
