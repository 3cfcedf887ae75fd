package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TenancyTest {

    private static ServiceSpec spec(String name) {
        String module = name.startsWith("gateway") ? "gateway-service" : name.startsWith("worker") ? "worker-agent" : name;
        return new ServiceSpec(name, module, Map.of(), 1, List.of("--server.port=1"), "64m");
    }

    @Test
    void theGatewayGetsTheModelsSharingPublicPrefixesKeysAndSecretAndWorkersTheAdapters() {
        Tenancy t = Tenancy.parse("tenant", List.of("You are helpful."), List.of("sk-a"), List.of("sql", "chat=/loras/chat"),
                2, 250);
        assertThat(t.saltSecret()).hasSize(32);
        assertThat(t.apply(spec("gateway-1"), List.of("m/1", "b")).args()).as("every gateway, every model")
                .contains("--flotilla.gateway.models[b].prefix-sharing=tenant");
        assertThat(t.apply(spec("gateway"), List.of("m/1")).args()).contains("--server.port=1",
                "--flotilla.gateway.models[m/1].prefix-sharing=tenant",
                "--flotilla.gateway.models[m/1].public-prefixes[0]=You are helpful.",
                "--flotilla.gateway.auth.api-keys[0]=sk-a",
                "--flotilla.gateway.prefix-isolation.salt-secret=" + t.saltSecret());
        assertThat(t.apply(spec("worker-0"), List.of("m/1")).args()).contains("--flotilla.worker.lora.max-loaded=2",
                "--flotilla.worker.lora.load-ms=250.0", "--flotilla.worker.lora.adapters[0]=chat",
                "--flotilla.worker.lora.adapters[1]=sql", "--flotilla.worker.lora.paths[chat]=/loras/chat");
        assertThat(t.apply(spec("router"), List.of("m/1")).args()).containsExactly("--server.port=1");
        assertThat(Tenancy.parse(null, null, null, null, 4, 500).saltSecret())
                .as("a fresh secret per up").isNotEqualTo(t.saltSecret());
    }

    @Test
    void addingArgumentsKeepsTheHeapAndTheDirectMemoryAKvHostTierNeeds() {
        ServiceSpec worker = new ServiceSpec("worker-0", "worker-agent", Map.of("grpc", 1), 1, List.of("--server.port=1"),
                "160m", "2816m");
        ServiceSpec applied = Tenancy.parse(null, null, null, List.of("sql"), 2, 250).apply(worker, List.of("m"));
        assertThat(applied.args()).contains("--server.port=1", "--flotilla.worker.lora.adapters[0]=sql");
        assertThat(applied.heap()).isEqualTo("160m");
        assertThat(applied.directMemory()).as("-XX:MaxDirectMemorySize of a worker with a 2 GiB host tier")
                .isEqualTo("2816m");
        assertThat(ProcessControl.jvmFlags(applied, WorkerJit.QUICK)).contains("-XX:MaxDirectMemorySize=2816m");
    }

    @Test
    void itRoundTripsThroughTheClusterStateSoLaterWorkersMatch() throws Exception {
        ClusterState state = ClusterState.load(java.nio.file.Files.createTempDirectory("tenancy-"));
        Tenancy t = Tenancy.parse("tenant", List.of("p"), List.of("k"), List.of("sql"), 3, 10);
        t.save(state);
        assertThat(Tenancy.load(state)).isEqualTo(t);
        assertThat(Tenancy.load(ClusterState.load(java.nio.file.Files.createTempDirectory("none-")))).isEqualTo(Tenancy.NONE);
    }

    @Test
    void badFlagsAreOneLineErrors() {
        assertThatThrownBy(() -> Tenancy.parse("private", null, null, null, 4, 500))
                .isInstanceOf(LauncherException.class).hasMessageContaining("--prefix-sharing");
        assertThatThrownBy(() -> Tenancy.parse(null, null, null, List.of("bad name"), 4, 500))
                .hasMessageContaining("--lora");
        assertThatThrownBy(() -> Tenancy.parse(null, null, null, null, 0, 500)).hasMessageContaining("--lora-slots");
    }

    @Test
    void aPolicyIsGivenForEveryModelOrPerModelNotBothAndKeysOnlyByApiKey() {
        GatewayOptions perModel = GatewayOptions.parse(1, null, List.of("models.m.prefix-sharing=tenant"));
        assertThatThrownBy(() -> Tenancy.parse("tenant", null, null, null, 4, 500).checkAgainst(perModel))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> Tenancy.parse(null, List.of("You are"), null, null, 4, 500).checkAgainst(
                GatewayOptions.parse(1, null, List.of("models[m].public-prefixes[0]=x")))).hasMessageContaining("not both");
        Tenancy global = Tenancy.parse("global", null, null, null, 4, 500);
        global.checkAgainst(perModel);
        assertThat(global.apply(spec("gateway"), List.of("m")).args()).as("global is the gateway's default: the "
                + "per-model setting stands alone").noneMatch(a -> a.contains("prefix-sharing"));
        assertThatThrownBy(() -> GatewayOptions.parse(1, null, List.of("auth.api-keys=sk-a,sk-b")))
                .hasMessage("--gateway-opt auth.api-keys: set it with --api-key (repeatable: each key a tenant)");
    }
}
