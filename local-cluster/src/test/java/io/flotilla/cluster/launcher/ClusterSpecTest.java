package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClusterSpecTest {

    @Test
    void aSpecNamingNothingIsBinFlotillaUpWithoutFlags() {
        ClusterSpec spec = ClusterSpec.builder().build();
        assertThat(spec).isEqualTo(new ClusterSpec(2, 0, 0, "kv", null, null, 1.0, PlannerOptions.SHADOW,
                ExternalEngines.NONE, List.of(ServedModel.DEFAULT), 1, KvbmOptions.NONE, GatewayOptions.ONE,
                Duration.ofSeconds(180)));
    }

    @Test
    void eachSetterChangesItsSettingAloneAndToBuilderGivesTheSpecBack() {
        ServedModel a = ServedModel.parse("model-a", null, null, true, Path.of("."));
        ClusterSpec spec = ClusterSpec.builder().workers(0).prefillDecode(1, 2).routerMode("load")
                .externalKafka("127.0.0.1:19092").kafkaConfig(Path.of("client.properties")).simSpeedup(10.0)
                .models(List.of(a, ServedModel.DEFAULT)).routers(2).timeout(Duration.ofSeconds(240)).build();
        assertThat(spec).isEqualTo(new ClusterSpec(0, 1, 2, "load", "127.0.0.1:19092", Path.of("client.properties"), 10.0,
                PlannerOptions.SHADOW, ExternalEngines.NONE, List.of(a, ServedModel.DEFAULT), 2, KvbmOptions.NONE,
                GatewayOptions.ONE, Duration.ofSeconds(240)));
        assertThat(spec.toBuilder().build()).isEqualTo(spec);
        assertThat(spec.toBuilder().routers(3).build()).isEqualTo(new ClusterSpec(0, 1, 2, "load", "127.0.0.1:19092",
                Path.of("client.properties"), 10.0, PlannerOptions.SHADOW, ExternalEngines.NONE,
                List.of(a, ServedModel.DEFAULT), 3, KvbmOptions.NONE, GatewayOptions.ONE, Duration.ofSeconds(240)));
    }

    @Test
    void aMissingSettingIsRefusedByName() {
        assertThatThrownBy(() -> ClusterSpec.builder().gateways(null).build()).hasMessage("gateways");
        assertThatThrownBy(() -> ClusterSpec.builder().timeout(null).build()).hasMessage("timeout");
    }
}
