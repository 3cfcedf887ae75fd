package io.flotilla.protocol.metrics;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class PrometheusTextTest {

    private static final String TEXT = """
            # HELP flotilla_gateway_overlap_predictions_total KV-routed requests
            # TYPE flotilla_gateway_overlap_predictions_total counter
            flotilla_gateway_overlap_predictions_total{application="gateway",model="flotilla-tiny",result="exact",} 41.0
            flotilla_gateway_overlap_predictions_total{application="gateway",model="flotilla-tiny",result="over",} 2.0
            flotilla_gateway_overlap_predictions_total{application="gateway",model="other",result="exact",} 7.0
            flotilla_worker_llama_reused_tokens_total{worker="worker-0"} 1.5E4 1700000000000
            process_uptime_seconds 12.5
            odd_label{note="a \\"quoted\\", comma} value"} 3
            not a sample line
            """;

    @Test
    void sumsTheSamplesWhoseLabelsMatch() {
        PrometheusText t = PrometheusText.parse(TEXT);

        assertThat(t.sum("flotilla_gateway_overlap_predictions_total", Map.of("model", "flotilla-tiny"))).isEqualTo(43);
        assertThat(t.sum("flotilla_gateway_overlap_predictions_total", Map.of("model", "flotilla-tiny", "result", "exact")))
                .isEqualTo(41);
        assertThat(t.sum("flotilla_gateway_overlap_predictions_total", Map.of())).isEqualTo(50);
        assertThat(t.sum("flotilla_worker_llama_reused_tokens_total", Map.of())).isEqualTo(15_000);
        assertThat(t.sum("process_uptime_seconds", Map.of())).isEqualTo(12.5);
        assertThat(t.sum("odd_label", Map.of("note", "a \"quoted\", comma} value"))).isEqualTo(3);
        assertThat(t.sum("flotilla_gateway_overlap_predictions_total", Map.of("result", "under"))).isNaN();
    }
}
