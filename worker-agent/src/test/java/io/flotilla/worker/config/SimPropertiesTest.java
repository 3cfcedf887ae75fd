package io.flotilla.worker.config;

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
