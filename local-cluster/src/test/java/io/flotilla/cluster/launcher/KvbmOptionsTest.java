package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KvbmOptionsTest {

    private static final Path STATE = Path.of("/tmp/flotilla-test-state");

    @Test
    void sizesTakeBinaryUnitsWithOrWithoutTheI() {
        assertThat(KvbmOptions.bytes("--kvbm-host", "2GiB")).isEqualTo(2L << 30);
        assertThat(KvbmOptions.bytes("--kvbm-host", "2G")).isEqualTo(2L << 30);
        assertThat(KvbmOptions.bytes("--kvbm-host", "512MiB")).isEqualTo(512L << 20);
        assertThat(KvbmOptions.bytes("--kvbm-host", "1.5g")).isEqualTo(3L << 29);
        assertThat(KvbmOptions.bytes("--kvbm-host", "4096")).isEqualTo(4096);
        assertThatThrownBy(() -> KvbmOptions.bytes("--kvbm-host", "lots")).isInstanceOf(LauncherException.class)
                .hasMessageContaining("--kvbm-host lots");
    }

    @Test
    void aDiskTierNeedsAHostTier() {
        assertThatThrownBy(() -> KvbmOptions.parse(null, "8GiB", null)).isInstanceOf(LauncherException.class)
                .hasMessageContaining("--kvbm-host");
    }

    @Test
    void workersGetTheirTiersTheirOwnDiskDirectoryAndRoomForDirectMemory() {
        KvbmOptions kvbm = KvbmOptions.parse("2GiB", "8GiB", 1024);
        ClusterLayout layout = new ClusterLayout(2, 0, 0, "kv", "k:9092", STATE, 1.0, ServedModel.DEFAULT, kvbm);
        ServiceSpec w1 = layout.worker(1);
        assertThat(w1.args()).contains("--flotilla.worker.kvbm.host-bytes=" + (2L << 30),
                "--flotilla.worker.kvbm.disk-bytes=" + (8L << 30), "--flotilla.worker.kvbm.disk-dir=" + STATE.resolve("kvbm"),
                "--flotilla.worker.sim.total-blocks=1024");
        assertThat(w1.directMemory()).isEqualTo((2048 + 16 + 256) + "m");
        assertThat(new ClusterLayout(1, 0, 0, "kv", "k:9092", STATE).worker(0).directMemory()).isEqualTo("512m");
    }
}
