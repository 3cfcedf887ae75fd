package io.flotilla.router.kube;

import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.Strategy;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RuntimeSettingsTest {

    private static final RouterConfig.Weights NOW = new RouterConfig.Weights(1, 2, 3);

    @Test
    void keysLeftOutKeepWhatRoutingRunsWith() {
        RuntimeSettings s = RuntimeSettings.parse(Map.of("weights.decode", "0.5"));
        assertThat(s.mode()).isEmpty();
        assertThat(s.weights(NOW)).contains(new RouterConfig.Weights(1, 0.5, 3));
        assertThat(RuntimeSettings.parse(Map.of()).weights(NOW)).isEmpty();
        assertThat(RuntimeSettings.parse(null).mode()).isEmpty();
    }

    @Test
    void everyKnownKeyIsRead() {
        RuntimeSettings s = RuntimeSettings.parse(Map.of("mode", " Load ", "weights.prefill", "0", "weights.decode", "1.5",
                "weights.queue", "4"));
        assertThat(s.mode()).isEqualTo(Optional.of(Strategy.LOAD));
        assertThat(s.weights(NOW)).contains(new RouterConfig.Weights(0, 1.5, 4));
    }

    @Test
    void anUnknownKeyOrABadValueRefusesTheWholeVersionNamingEachKey() {
        assertThatThrownBy(() -> RuntimeSettings.parse(Map.of("mode", "kv", "temperature", "0.1")))
                .isInstanceOf(RuntimeSettings.Rejected.class).hasMessageContaining("unknown key 'temperature'");
        assertThatThrownBy(() -> RuntimeSettings.parse(Map.of("mode", "fastest")))
                .hasMessageContaining("unknown routing mode 'fastest'");
        assertThatThrownBy(() -> RuntimeSettings.parse(Map.of("weights.queue", "-1", "weights.decode", "NaN", "weights.prefill", "x")))
                .hasMessageContaining("weights.queue: must be a number >= 0, was '-1'")
                .hasMessageContaining("weights.decode").hasMessageContaining("weights.prefill");
    }
}
