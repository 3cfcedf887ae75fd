package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/** The flags of {@code bin/flotilla up} that say what the cluster serves. */
class FlotillaCliTest {

    private static FlotillaCli.Up up(String... args) {
        FlotillaCli.Up up = new FlotillaCli.Up();
        new CommandLine(up).parseArgs(args);
        return up;
    }

    @Test
    void modelFlagsReachTheCommand() {
        FlotillaCli.Up up = up("--model", "meta-llama/Llama-3.1-8B-Instruct", "--model-dir", "models/llama", "--block-size", "32");
        assertThat(up.model).isEqualTo("meta-llama/Llama-3.1-8B-Instruct");
        assertThat(up.modelDir).isEqualTo("models/llama");
        assertThat(up.blockSize).isEqualTo(32);
    }

    @Test
    void routersDefaultToOneAndTheFlagSetsThem() {
        assertThat(up().routers).isEqualTo(1);
        assertThat(up("--routers", "2").routers).isEqualTo(2);
    }

    @Test
    void classDataSharingIsOnUnlessNoCdsIsGiven() {
        assertThat(up().noCds).isFalse();
        assertThat(up("--no-cds").noCds).isTrue();
    }

    @Test
    void engineBlockSizeIsTheOldNameOfBlockSize() {
        assertThat(up("--engine-block-size", "64").blockSize).isEqualTo(64);
    }

    @Test
    void withoutModelFlagsTheDefaultsApply() {
        FlotillaCli.Up up = up();
        assertThat(up.model).isNull();
        assertThat(up.modelDir).isNull();
        assertThat(up.blockSize).isNull();
        assertThat(ServedModel.parse(up.model, up.modelDir, up.blockSize, true, FlotillaCli.workingDir()))
                .isEqualTo(ServedModel.DEFAULT);
    }

    @Test
    void relativePathsAreRelativeToWhereBinFlotillaRan() {
        String before = System.getProperty("flotilla.cwd");
        try {
            System.setProperty("flotilla.cwd", "/srv/models/../work");
            assertThat(FlotillaCli.workingDir()).hasToString("/srv/work");
        } finally {
            if (before == null) {
                System.clearProperty("flotilla.cwd");
            } else {
                System.setProperty("flotilla.cwd", before);
            }
        }
    }
}
