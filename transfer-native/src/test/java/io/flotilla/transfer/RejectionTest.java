package io.flotilla.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every bad request is refused before a byte moves: by the initiator when it posts (exception), or
 * by the target before it touches memory (the request ends in ERROR and target memory is unchanged).
 */
class RejectionTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int LEN = 64 * 1024;

    private static void assertCode(ThrowingCallable call, ErrorCode code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(TransferException.class, e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(code));
    }

    private static ByteBuffer sentinel(Registration r) {
        ByteBuffer view = r.requireBuffer();
        for (int i = 0; i < view.capacity(); i++) {
            view.put(i, (byte) 0x5A);
        }
        return view;
    }

    private static boolean untouched(ByteBuffer view) {
        for (int i = 0; i < view.capacity(); i++) {
            if (view.get(i) != 0x5A) {
                return false;
            }
        }
        return true;
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void initiatorRefusesBadDescriptorsAndAgentsBeforeSendingAnything(Setup setup) {
        assumeTrue(setup.available(), setup + " not available in this build");
        try (Setup.AgentPair p = setup.open("reject")) {
            TransferAgent in = p.initiator();
            Registration local = in.register(MemoryRegion.of(ByteBuffer.allocateDirect(LEN)));
            Registration remote = setup.targetRegion(p.target(), LEN);
            ByteBuffer view = sentinel(remote);
            p.exchange();
            String t = p.targetName();
            XferDescList okLocal = XferDescList.of().add(local, 0, 64), okRemote = XferDescList.of().add(remote, 0, 64);

            assertCode(() -> in.write(t, okLocal, XferDescList.of().add(remote, LEN - 63, 64), null), ErrorCode.OUT_OF_BOUNDS);
            assertCode(() -> in.write(t, XferDescList.of().add(local, LEN - 63, 64), okRemote, null), ErrorCode.OUT_OF_BOUNDS);
            assertCode(() -> in.write(t, okLocal, XferDescList.of().add(remote, Long.MAX_VALUE - 8, 64), null), ErrorCode.OUT_OF_BOUNDS);
            assertCode(() -> in.write(t, XferDescList.of().add(local, LEN - 1, 64), okRemote, null), ErrorCode.OUT_OF_BOUNDS);
            assertCode(() -> in.write(t, XferDescList.of().addAddress(local.base() + LEN, 64), okRemote, null), ErrorCode.OUT_OF_BOUNDS);
            assertCode(() -> in.write(t, okLocal, XferDescList.of().addAddress(remote.base() + LEN - 1, 64), null), ErrorCode.OUT_OF_BOUNDS);
            assertCode(() -> in.write(t, okLocal, XferDescList.of().add(999, 0, 64), null), ErrorCode.UNKNOWN_REGION);
            assertCode(() -> in.write("nobody", okLocal, okRemote, null), ErrorCode.UNKNOWN_AGENT);
            assertCode(() -> in.write(t, okLocal, XferDescList.of().add(remote, 0, 65), null), ErrorCode.INVALID_ARGUMENT);
            assertCode(() -> in.read(t, okLocal, XferDescList.of().add(remote, 0, 64).add(remote, 64, 64), null), ErrorCode.INVALID_ARGUMENT);
            assertCode(() -> in.read(t, XferDescList.of(), XferDescList.of(), null), ErrorCode.INVALID_ARGUMENT);
            assertThat(untouched(view)).as("target memory after refused requests").isTrue();

            try (TransferRequest edge = in.write(t, XferDescList.of().add(local, LEN - 64, 64), XferDescList.of().add(remote, LEN - 64, 64), null)) {
                edge.awaitDone(WAIT); // the last 64 bytes are inside
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }

            in.deregister(local);
            assertCode(() -> in.write(t, okLocal, okRemote, null), ErrorCode.UNKNOWN_REGION);
            assertCode(() -> in.deregister(local), ErrorCode.UNKNOWN_REGION);
            in.invalidateRemoteMetadata(t);
            assertCode(() -> in.read(t, okLocal, okRemote, null), ErrorCode.UNKNOWN_AGENT);
        }
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void targetRefusesRegionsDeregisteredAfterTheInitiatorLoadedItsMetadata(Setup setup) throws Exception {
        assumeTrue(setup.available(), setup + " not available in this build");
        try (Setup.AgentPair p = setup.open("stale-region")) {
            Registration local = p.initiator().register(MemoryRegion.of(ByteBuffer.allocateDirect(LEN)));
            Registration remote = setup.targetRegion(p.target(), LEN);
            p.exchange();
            ByteBuffer kept = remote.shared() ? null : sentinel(remote);
            p.target().deregister(remote); // the initiator's copy of the metadata still lists it

            try (TransferRequest w = p.initiator().write(p.targetName(), XferDescList.of().add(local, 0, 4096),
                    XferDescList.of().add(remote, 0, 4096), "never delivered".getBytes())) {
                assertThat(w.await(WAIT)).isEqualTo(TransferStatus.ERROR);
                assertThat(w.failure()).get().satisfies(e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_REGION);
                    assertThat(e.detail()).startsWith(setup.backend.name().toLowerCase() + ": target: ");
                });
            }
            if (kept != null) {
                assertThat(untouched(kept)).as("deregistered memory after the refused write").isTrue();
            }
            assertThat(p.target().pollNotifications()).isEmpty();
        }
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void targetChecksBoundsItselfWhenTheInitiatorsMetadataOverstatesARegion(Setup setup) throws Exception {
        assumeTrue(setup.available(), setup + " not available in this build");
        try (Setup.AgentPair p = setup.open("lying")) {
            Registration local = p.initiator().register(MemoryRegion.of(ByteBuffer.allocateDirect(2 * LEN)));
            Registration remote = setup.targetRegion(p.target(), LEN);
            ByteBuffer view = sentinel(remote);
            AgentMetadata truth = AgentMetadata.decode(p.target().localMetadata());
            AgentMetadata lie = new AgentMetadata(truth.name(), truth.instance(), truth.hostId(), truth.backends(), truth.tcpHost(), truth.tcpPort(),
                    truth.ucxAddress(), truth.regions().stream().map(r -> new AgentMetadata.Region(r.id(), r.base(), 2L * r.length(), r.kind(),
                            r.shared(), r.shmName(), r.rkey())).toList());
            p.initiator().loadRemoteMetadata(lie.encode());
            // the first pair is fine, the second runs past the region: the target must refuse both
            XferDescList l = XferDescList.of().add(local, 0, 64).add(local, 64, LEN);
            XferDescList r = XferDescList.of().add(remote, 0, 64).add(remote, LEN / 2, LEN);
            if (setup.backend == Backend.SHM) {
                // the initiator maps a segment only when it is as large as the metadata claims
                assertCode(() -> p.initiator().write(p.targetName(), l, r, null), ErrorCode.UNSUPPORTED);
            } else {
                try (TransferRequest w = p.initiator().write(p.targetName(), l, r, null)) {
                    assertThat(w.await(WAIT)).isEqualTo(TransferStatus.ERROR);
                    assertThat(w.failure().orElseThrow().code()).isEqualTo(ErrorCode.OUT_OF_BOUNDS);
                    assertThat(w.failure().orElseThrow().detail()).startsWith(setup.backend.name().toLowerCase() + ": target: ");
                }
            }
            assertThat(untouched(view)).as("target memory after a write past its region").isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Setup.class)
    void targetRefusesMetadataOfAnEarlierInstanceOnTheSamePort(Setup setup) throws Exception {
        assumeTrue(setup.available(), setup + " not available in this build");
        TransferAgent initiator = TransferAgent.create("initiator-restart", setup.config(setup.initiatorEngine));
        try (initiator) {
            Registration local = initiator.register(MemoryRegion.of(ByteBuffer.allocateDirect(LEN)));
            byte[] stale;
            int port;
            long regionId;
            try (TransferAgent first = TransferAgent.create("target-restart", setup.config(setup.targetEngine))) {
                stale = first.localMetadata();
                port = AgentMetadata.decode(stale).tcpPort();
                regionId = setup.targetRegion(first, LEN).id();
                stale = first.localMetadata();
            }
            try (TransferAgent second = TransferAgent.create("target-restart", setup.config(setup.targetEngine).withListen("127.0.0.1", port))) {
                Registration again = setup.targetRegion(second, LEN);
                assertThat(again.id()).isEqualTo(regionId);
                ByteBuffer view = sentinel(again);
                initiator.loadRemoteMetadata(stale);
                XferDescList l = XferDescList.of().add(local, 0, 64), r = XferDescList.of().add(regionId, 0, 64);
                if (setup.backend == Backend.SHM) {
                    // the earlier instance's segments are gone, so the initiator has nothing it could map
                    assertCode(() -> initiator.write("target-restart", l, r, null), ErrorCode.UNSUPPORTED);
                } else if (setup.backend == Backend.UCX) {
                    // UCX may refuse the dead worker's address at load time (no endpoint: UNSUPPORTED at post)
                    // or connect lazily, in which case the lease meets the new instance (UNKNOWN_AGENT)
                    try (TransferRequest w = initiator.write("target-restart", l, r, null)) {
                        assertThat(w.await(WAIT)).isEqualTo(TransferStatus.ERROR);
                        assertThat(w.failure().orElseThrow().code()).isEqualTo(ErrorCode.UNKNOWN_AGENT);
                    } catch (TransferException e) {
                        assertThat(e.code()).isEqualTo(ErrorCode.UNSUPPORTED);
                    }
                } else {
                    try (TransferRequest w = initiator.write("target-restart", l, r, null)) {
                        assertThat(w.await(WAIT)).isEqualTo(TransferStatus.ERROR);
                        assertThat(w.failure().orElseThrow().code()).isEqualTo(ErrorCode.UNKNOWN_AGENT);
                    }
                }
                assertThat(untouched(view)).isTrue();
                assertCode(() -> initiator.sendNotification("target-restart", new byte[1]), ErrorCode.UNKNOWN_AGENT);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = Implementation.class, names = {"NATIVE", "JAVA"})
    void refusesVramHeapBuffersAndUseAfterClose(Implementation engine) {
        assumeTrue(engine == Implementation.JAVA || TransferAgent.nativeLoaded());
        TransferAgent agent = TransferAgent.create("kinds-" + engine, TransferConfig.defaults().withImplementation(engine));
        try (agent) {
            assertThatThrownBy(() -> agent.register(MemoryRegion.vram(0, 0x7f0000000000L, 1 << 20)))
                    .isInstanceOfSatisfying(TransferException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.UNSUPPORTED);
                        assertThat(e.getMessage()).contains("VRAM").contains("CUDA");
                    });
            assertCode(() -> MemoryRegion.of(ByteBuffer.allocate(64)), ErrorCode.INVALID_ARGUMENT);
            assertCode(() -> agent.loadRemoteMetadata(new byte[] {1, 2, 3}), ErrorCode.PROTOCOL);
            assertCode(() -> agent.loadRemoteMetadata(agent.localMetadata()), ErrorCode.INVALID_ARGUMENT);
        }
        assertCode(() -> agent.register(MemoryRegion.of(ByteBuffer.allocateDirect(64))), ErrorCode.CLOSED);
        assertCode(() -> agent.pollNotifications(), ErrorCode.CLOSED);
    }
}
