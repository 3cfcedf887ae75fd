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
        assertThat(up.models).containsExactly("meta-llama/Llama-3.1-8B-Instruct");
        assertThat(up.modelDirs).containsExactly("models/llama");
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
    void workersCompileQuicklyUnlessTieredIsAsked() {
        assertThat(up().workerJit).isEqualTo("quick");
        assertThat(up("--worker-jit", "tiered").workerJit).isEqualTo("tiered");
    }

    @Test
    void engineBlockSizeIsTheOldNameOfBlockSize() {
        assertThat(up("--engine-block-size", "64").blockSize).isEqualTo(64);
    }

    @Test
    void withoutModelFlagsTheDefaultsApply() {
        FlotillaCli.Up up = up();
        assertThat(up.models).isEmpty();
        assertThat(up.modelDirs).isEmpty();
        assertThat(up.blockSize).isNull();
        assertThat(up.servedModels(true)).containsExactly(ServedModel.DEFAULT);
        assertThat(up.gateways).isEqualTo(1);
        assertThat(GatewayOptions.parse(up.gateways, up.redis, up.gatewayOpts)).isEqualTo(GatewayOptions.ONE);
    }

    @Test
    void severalModelsAreServedSideBySideTheFirstBeingTheDefault() {
        FlotillaCli.Up up = up("--model", "A", "--model", "B", "--workers", "1");
        assertThat(up.servedModels(true)).extracting(ServedModel::name).containsExactly("A", "B");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> up("--model", "A", "--model", "B", "--model-dir", "x")
                        .servedModels(true))
                .isInstanceOf(LauncherException.class)
                .hasMessage("give --model-dir once per --model (in their order) or not at all: 2 models, 1 directories");
    }

    @Test
    void twoGatewaysShareALaunchedRedisUnlessToldOtherwise() {
        FlotillaCli.Up two = up("--gateways", "2", "--gateway-opt", "rate-limit.requests-per-period=100");
        GatewayOptions g = GatewayOptions.parse(two.gateways, two.redis, two.gatewayOpts);
        assertThat(g.launchesRedis()).isTrue();
        assertThat(g.redisUri()).isEqualTo("redis://127.0.0.1:6380");
        assertThat(g.args()).containsExactly("--flotilla.gateway.limits.redis-uri=redis://127.0.0.1:6380",
                "--flotilla.gateway.rate-limit.requests-per-period=100");
        assertThat(GatewayOptions.parse(2, "none", java.util.List.of()).redisUri()).isNull();
        assertThat(GatewayOptions.parse(2, "redis.internal:6379", java.util.List.of()).redisUri())
                .isEqualTo("redis://redis.internal:6379");
        assertThat(GatewayOptions.parse(1, null, java.util.List.of()).redisUri()).isNull();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GatewayOptions.parse(2, null,
                        java.util.List.of("flotilla.gateway.limits.redis-uri=redis://x:1")))
                .hasMessage("--gateway-opt limits.redis-uri: set it with --redis");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GatewayOptions.parse(11, null, java.util.List.of()))
                .hasMessage("--gateways must be between 1 and 10");
        assertThat(GatewayOptions.parse(1, null, java.util.List.of("flow.tenants[key-1a2b].max-in-flight=4")).args())
                .containsExactly("--flotilla.gateway.flow.tenants[key-1a2b].max-in-flight=4");
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
