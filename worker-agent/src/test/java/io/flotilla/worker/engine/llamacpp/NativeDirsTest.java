package io.flotilla.worker.engine.llamacpp;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class NativeDirsTest {

    @Test
    void foldersOfGoneProcessesAreRemovedAndLiveOnesKept() throws Exception {
        Path tmp = Files.createTempDirectory("native-dirs-");
        Path live = Files.createDirectories(tmp.resolve(NativeDirs.PREFIX + ProcessHandle.current().pid()));
        Path gone = Files.createDirectories(tmp.resolve(NativeDirs.PREFIX + Long.MAX_VALUE / 2));
        Files.writeString(gone.resolve("libjllama.so"), "x");
        Path other = Files.createDirectories(tmp.resolve("unrelated"));
        assertThat(NativeDirs.removeStale(tmp)).isEqualTo(1);
        assertThat(gone).doesNotExist();
        assertThat(live).exists();
        assertThat(other).exists();
    }

    @Test
    void twoWorkersSweepingTheSameStaleFolderAtOnceBothStart() throws Exception {
        Path tmp = Files.createTempDirectory("native-dirs-race-");
        for (int i = 0; i < 20; i++) {
            Path gone = Files.createDirectories(tmp.resolve(NativeDirs.PREFIX + (Long.MAX_VALUE / 2 - i)));
            for (int f = 0; f < 50; f++) {
                Files.writeString(gone.resolve("f" + f), "x");
            }
        }
        Thread other = new Thread(() -> NativeDirs.removeStale(tmp));
        other.start();
        NativeDirs.removeStale(tmp); // must not throw while the other deletes under it
        other.join();
        try (var left = Files.list(tmp)) {
            assertThat(left).isEmpty();
        }
    }
}
