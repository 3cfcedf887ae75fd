package io.flotilla.worker.engine.sim;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The simulated engine's embeddings behave like a bag-of-tokens model: deterministic, order-free, similar when they share tokens. */
class SimEmbeddingsTest {

    private final SimEmbeddings embeddings = new SimEmbeddings(64, 1000, 512, 7);

    private float[] embed(int... ids) {
        return embeddings.embed("r", List.of(ids), 0).join().get(0);
    }

    private static double cosine(float[] a, float[] b) {
        double dot = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
        }
        return dot; // both are unit vectors
    }

    @Test
    void sharedTokensMeanCloserVectorsAndOrderDoesNotMatter() {
        float[] a = embed(10, 20, 30, 40, 50, 60);
        float[] nearA = embed(10, 20, 30, 40, 50, 61);
        float[] farFromA = embed(100, 200, 300, 400, 500, 600);

        assertThat(embed(60, 50, 40, 30, 20, 10)).containsExactly(a);
        assertThat(cosine(a, nearA)).isGreaterThan(cosine(a, farFromA)).isGreaterThan(0.5);
    }

    @Test
    void theSeedChoosesTheDirections() {
        float[] seven = embed(1, 2, 3);
        float[] eight = new SimEmbeddings(64, 1000, 512, 8).embed("r", List.of(new int[]{1, 2, 3}), 0).join().get(0);
        assertThat(eight).isNotEqualTo(seven);
        assertThat(new SimEmbeddings(64, 1000, 512, 7).embed("r", List.of(new int[]{1, 2, 3}), 0).join().get(0))
                .containsExactly(seven);
    }
}
