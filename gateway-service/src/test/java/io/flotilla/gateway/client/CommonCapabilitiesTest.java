package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.EmbeddingCapability;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.SamplingFeature;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A model's capabilities over its workers: sampling features all must have, embeddings any may have. */
class CommonCapabilitiesTest {

    private static EngineCapabilities caps(EmbeddingCapability embedding, SamplingFeature... features) {
        EngineCapabilities.Builder b = EngineCapabilities.newBuilder().addAllFeatures(java.util.List.of(features));
        if (embedding != null) {
            b.setEmbedding(embedding);
        }
        return b.build();
    }

    private static EmbeddingCapability embedding(int dims, boolean truncatable) {
        return EmbeddingCapability.newBuilder().setDimensions(dims).setTruncatable(truncatable).build();
    }

    @Test
    void samplingIsTheIntersectionAndEmbeddingsComeFromWhicheverWorkersEmbed() {
        EngineCapabilities generator = caps(null, SamplingFeature.SAMPLING_FEATURE_TOP_P, SamplingFeature.SAMPLING_FEATURE_TOP_K);
        EngineCapabilities embedder = caps(embedding(256, true), SamplingFeature.SAMPLING_FEATURE_TOP_P);

        EngineCapabilities model = ModelCatalog.common(generator, embedder);
        assertThat(model.getFeaturesList()).containsExactly(SamplingFeature.SAMPLING_FEATURE_TOP_P);
        assertThat(model.getEmbedding()).isEqualTo(embedding(256, true));
        assertThat(ModelCatalog.common(embedder, generator).getEmbedding()).isEqualTo(embedding(256, true));
        assertThat(ModelCatalog.common(generator, generator).hasEmbedding()).isFalse();
    }

    @Test
    void embeddersThatDisagreeAreShortenedToNeitherAndNotShortenedFurther() {
        assertThat(ModelCatalog.common(caps(embedding(256, true)), caps(embedding(256, false))).getEmbedding())
                .isEqualTo(embedding(256, false));
        assertThat(ModelCatalog.common(caps(embedding(256, true)), caps(embedding(128, true))).getEmbedding())
                .isEqualTo(embedding(128, false));
    }
}
