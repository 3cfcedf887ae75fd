package io.flotilla.worker.agent;

import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.sim.SimEngineConfig;
import io.flotilla.worker.engine.sim.SimulatedEngine;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A worker advertises embeddings exactly when its engine has them; routers send embeddings only there. */
class AdvertisedEmbeddingsTest {

    @Test
    void theEnginesEmbeddingsAreAdvertisedBesideItsSamplingFeatures() {
        try (SimulatedEngine embeds = SimulatedEngine.startRealTime(SimEngineConfig.builder().kvBytesPerBlock(0)
                .embeddingDimensions(32).build(), EngineListeners.NONE, "adv-1");
             SimulatedEngine plain = SimulatedEngine.startRealTime(SimEngineConfig.builder().kvBytesPerBlock(0)
                     .embeddingDimensions(0).build(), EngineListeners.NONE, "adv-2")) {
            var advertised = StatusReporter.advertisedCapabilities(embeds);
            assertThat(advertised.hasEmbedding()).isTrue();
            assertThat(advertised.getEmbedding().getDimensions()).isEqualTo(32);
            assertThat(advertised.getEmbedding().getTruncatable()).isTrue();
            assertThat(advertised.getFeaturesList()).isEqualTo(embeds.capabilities().getFeaturesList());

            assertThat(StatusReporter.advertisedCapabilities(plain).hasEmbedding()).isFalse();
        }
    }
}
