package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.metrics.PrometheusText;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class EngineMetricsTest {

    @Test
    void prometheusTextParsesLabelsEscapesAndSpecialValues() {
        PrometheusText t = PrometheusText.parse("""
                # HELP x help text
                # TYPE x gauge
                x{a="1",b="with \\"quotes\\" and \\\\ slash"} 2.5
                x{a="2"} 1.5 1700000000000
                y NaN
                z +Inf
                broken{a="1" 3
                plain 7
                """);
        assertThat(t.sum("x")).hasValue(4.0);
        assertThat(t.mean("x")).hasValue(2.0);
        assertThat(t.labels("x")).containsEntry("b", "with \"quotes\" and \\ slash");
        assertThat(t.sum("y")).isEmpty();
        assertThat(t.sum("z")).hasValue(Double.POSITIVE_INFINITY);
        assertThat(t.sum("plain")).hasValue(7.0);
        assertThat(t.sum("broken")).isEmpty();
        assertThat(t.sum("missing")).isEmpty();
    }

    @Test
    void vllmMetricsGiveLoadBlocksAndBlockSize() {
        EngineMetrics m = EngineMetrics.from(PrometheusText.parse(FakeVllmServer.vllmMetrics(3, 2, 0.25, 16, 2048)), 16);
        assertThat(m).isEqualTo(new EngineMetrics(3, 2, 0.25, 2048, 16));
        assertThat(m.activeKvBlocks()).isEqualTo(512);
    }

    @Test
    void olderVllmReportsGpuCacheUsage() {
        EngineMetrics m = EngineMetrics.from(PrometheusText.parse("""
                vllm:num_requests_running{model_name="m"} 1.0
                vllm:num_requests_waiting{model_name="m"} 0.0
                vllm:gpu_cache_usage_perc{model_name="m"} 0.5
                vllm:cache_config_info{block_size="32",num_gpu_blocks="100"} 1.0
                """), 16);
        assertThat(m).isEqualTo(new EngineMetrics(1, 0, 0.5, 100, 32));
    }

    @Test
    void sglangMetricsGiveLoadAndTokenCapacity() {
        EngineMetrics m = EngineMetrics.from(PrometheusText.parse("""
                # TYPE sglang:num_running_reqs gauge
                sglang:num_running_reqs{model_name="m",tp_rank="0"} 4.0
                sglang:num_queue_reqs{model_name="m",tp_rank="0"} 6.0
                sglang:token_usage{model_name="m",tp_rank="0"} 0.125
                sglang:max_total_num_tokens{model_name="m",tp_rank="0"} 32768.0
                """), 16);
        assertThat(m).isEqualTo(new EngineMetrics(4, 6, 0.125, 2048, 0));
        assertThat(m.activeKvBlocks()).isEqualTo(256);
    }
}
