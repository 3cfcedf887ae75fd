package io.flotilla.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The metadata format both engines share, and what the capability query reports. */
class MetadataAndCapabilitiesTest {

    private static boolean buildPlatform() {
        return NativeLibrary.platformDirectory().equals("native/linux-x86_64");
    }

    @Test
    void nativeLibraryLoadsFromTheJarResourceOnTheBuildPlatform() {
        assumeTrue(buildPlatform());
        assertThat(NativeLibrary.class.getClassLoader().getResource("native/linux-x86_64/" + NativeLibrary.LIBRARY)).isNotNull();
        Capabilities caps = TransferAgent.capabilities();
        assertThat(caps.nativeLoaded()).as("native load error: %s", caps.nativeLoadError()).isTrue();
        assertThat(caps.nativeBackends()).contains(Backend.SHM, Backend.TCP);
        assertThat(caps.javaBackends()).containsExactly(Backend.TCP);
        assertThat(TransferAgent.backends()).isEqualTo(caps.nativeBackends());
        assertThat(caps.ucx()).isNotBlank();
        assertThat(caps.nativeBackends().contains(Backend.UCX)).as(caps.ucx()).isEqualTo(caps.ucx().startsWith("built and loaded"));
        try (TransferAgent auto = TransferAgent.create("auto", TransferConfig.defaults())) {
            assertThat(auto.implementation()).isEqualTo(Implementation.NATIVE);
            assertThat(auto.enabledBackends()).containsExactlyInAnyOrder(Backend.SHM, Backend.TCP); // ucx only on request
        }
        try (TransferAgent tcp = TransferAgent.create("tcp-only", TransferConfig.defaults().withBackends(Backend.TCP))) {
            assertThat(tcp.enabledBackends()).containsExactly(Backend.TCP);
        }
    }

    @Test
    void javaEngineRefusesBackendsItDoesNotHave() {
        assertThatThrownBy(() -> TransferAgent.create("j", TransferConfig.defaults().withImplementation(Implementation.JAVA).withBackends(Backend.SHM)))
                .isInstanceOfSatisfying(TransferException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNSUPPORTED));
        if (!TransferAgent.capabilities().nativeBackends().contains(Backend.UCX) && TransferAgent.nativeLoaded()) {
            assertThatThrownBy(() -> TransferAgent.create("u", TransferConfig.defaults().withImplementation(Implementation.NATIVE).withBackends(Backend.UCX)))
                    .isInstanceOfSatisfying(TransferException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNSUPPORTED));
        }
    }

    @Test
    void nativeMetadataDescribesNameEndpointsAndRegions() {
        assumeTrue(TransferAgent.nativeLoaded());
        try (TransferAgent agent = TransferAgent.create("described", TransferConfig.defaults().withImplementation(Implementation.NATIVE))) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
            Registration plain = agent.register(MemoryRegion.of(buffer));
            Registration shared = agent.allocateShared(1 << 16);
            AgentMetadata md = AgentMetadata.decode(agent.localMetadata());
            assertThat(md.name()).isEqualTo("described");
            assertThat(md.tcpHost()).isEqualTo("127.0.0.1");
            assertThat(md.tcpPort()).isPositive();
            assertThat(Backend.fromBits(md.backends())).isEqualTo(agent.enabledBackends());
            assertThat(md.hostId()).isEqualTo(HostId.get());
            assertThat(md.regions()).extracting(AgentMetadata.Region::id, AgentMetadata.Region::base, AgentMetadata.Region::length, AgentMetadata.Region::shared)
                    .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(plain.id(), plain.base(), 4096L, false),
                            org.assertj.core.groups.Tuple.tuple(shared.id(), shared.base(), 65536L, true));
            assertThat(md.encode()).isEqualTo(agent.localMetadata()); // Java re-encodes the native bytes exactly
            agent.deregister(plain);
            assertThat(AgentMetadata.decode(agent.localMetadata()).regions()).extracting(AgentMetadata.Region::id).containsExactly(shared.id());
        }
    }

    @Test
    void everyTruncationIsRefusedByBothEngines() {
        AgentMetadata md = new AgentMetadata("a", 7, "boot/host", 3, "127.0.0.1", 7300, new byte[] {9},
                List.of(new AgentMetadata.Region(1, 4096, 100, 0, true, "/flotilla-1-x-1", new byte[] {1, 2})));
        byte[] bytes = md.encode();
        assertThat(AgentMetadata.decode(bytes)).usingRecursiveComparison().isEqualTo(md);
        TransferAgent nativeAgent = TransferAgent.nativeLoaded() ? TransferAgent.create("n", TransferConfig.defaults().withImplementation(Implementation.NATIVE)) : null;
        try (TransferAgent javaAgent = TransferAgent.create("j", TransferConfig.defaults().withImplementation(Implementation.JAVA))) {
            for (int cut = 0; cut < bytes.length; cut++) {
                byte[] part = Arrays.copyOf(bytes, cut);
                for (TransferAgent agent : nativeAgent == null ? Set.of(javaAgent) : Set.of(javaAgent, nativeAgent)) {
                    assertThatThrownBy(() -> agent.loadRemoteMetadata(part)).as("%s, %d bytes", agent.implementation(), part.length)
                            .isInstanceOfSatisfying(TransferException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL));
                }
            }
            assertThat(javaAgent.loadRemoteMetadata(bytes)).isEqualTo("a");
            if (nativeAgent != null) {
                assertThat(nativeAgent.loadRemoteMetadata(bytes)).isEqualTo("a");
            }
        } finally {
            if (nativeAgent != null) {
                nativeAgent.close();
            }
        }
    }
}
