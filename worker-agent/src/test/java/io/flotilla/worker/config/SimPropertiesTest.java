package io.flotilla.worker.config;

import io.flotilla.worker.engine.sim.SimEngineConfig;
import io.flotilla.worker.settings.WorkerProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code flotilla.worker.sim.vocab-size} and {@code eos-token-id}: a simulated engine behind a gateway that
 * tokenizes with a model directory's tokenizer takes that tokenizer's vocabulary ({@code bin/flotilla up
 * --model-dir} sets both).
 */
class SimPropertiesTest {

    private static WorkerProperties bind(Map<String, String> props) {
        return new Binder(new MapConfigurationPropertySource(props)).bindOrCreate("flotilla.worker", WorkerProperties.class);
    }

    @Test
    void theDefaultVocabularyIsCl100k() {
        WorkerProperties.Sim sim = bind(Map.of()).sim();
        assertThat(sim.vocabSize()).isEqualTo(100277);
        assertThat(sim.eosTokenId()).isEqualTo(100257);
    }

    @Test
    void unsetKeysGiveTheSimulatedEnginesOwnDefaults() {
        assertThat(bind(Map.of()).sim().engineConfig().build())
                .as("what the worker runs with no sim keys set is what SimEngineConfig's tests run")
                .isEqualTo(SimEngineConfig.defaults());
    }

    @Test
    void everySimKeyReachesTheEngineConfig() {
        SimEngineConfig c = bind(Map.ofEntries(
                Map.entry("flotilla.worker.sim.block-size", "32"),
                Map.entry("flotilla.worker.sim.total-blocks", "100"),
                Map.entry("flotilla.worker.sim.max-running", "7"),
                Map.entry("flotilla.worker.sim.max-batch-tokens", "512"),
                Map.entry("flotilla.worker.sim.max-waiting", "9"),
                Map.entry("flotilla.worker.sim.max-context", "4096"),
                Map.entry("flotilla.worker.sim.kv-bytes-per-block", "0"),
                Map.entry("flotilla.worker.sim.speedup", "2.5"),
                Map.entry("flotilla.worker.sim.seed", "42"),
                Map.entry("flotilla.worker.sim.vocab-size", "32000"),
                Map.entry("flotilla.worker.sim.eos-token-id", "2"))).sim().engineConfig().build();
        assertThat(c).isEqualTo(SimEngineConfig.builder().blockSize(32).totalBlocks(100).maxRunning(7).maxBatchTokens(512)
                .maxWaiting(9).maxContextTokens(4096).kvBytesPerBlock(0).speedup(2.5).seed(42).vocabSize(32000)
                .eosTokenId(2).build());
    }

    @Test
    void aModelsVocabularyBinds() {
        WorkerProperties.Sim sim = bind(Map.of(
                "flotilla.worker.sim.vocab-size", "128256",
                "flotilla.worker.sim.eos-token-id", "128009",
                "flotilla.worker.sim.block-size", "32")).sim();
        assertThat(sim.vocabSize()).isEqualTo(128256);
        assertThat(sim.eosTokenId()).isEqualTo(128009);
        assertThat(sim.blockSize()).isEqualTo(32);
    }

    @Test
    void anEosOutsideTheVocabularyIsRefused() {
        assertThatThrownBy(() -> bind(Map.of("flotilla.worker.sim.vocab-size", "32000")))
                .isInstanceOf(BindException.class).rootCause()
                .hasMessage("flotilla.worker.sim.eos-token-id 100257 is outside the vocabulary [0, 32000) of "
                        + "flotilla.worker.sim.vocab-size");
    }
}
