package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.metrics.PrometheusText;
/**
 * What one scrape of an external engine's Prometheus endpoint says.
 *
 * @param running         requests in the running batch ({@code vllm:num_requests_running},
 *                        {@code sglang:num_running_reqs})
 * @param waiting         requests queued ({@code vllm:num_requests_waiting}, {@code sglang:num_queue_reqs})
 * @param kvUsage         fraction of KV cache in use, in [0, 1] ({@code vllm:kv_cache_usage_perc},
 *                        older {@code vllm:gpu_cache_usage_perc}, {@code sglang:token_usage})
 * @param totalKvBlocks   KV blocks of the engine ({@code num_gpu_blocks} label of
 *                        {@code vllm:cache_config_info}; SGLang: {@code sglang:max_total_num_tokens}
 *                        / block size), 0 when unknown
 * @param engineBlockSize block size the engine reports ({@code block_size} label of
 *                        {@code vllm:cache_config_info}), 0 when unknown
 */
public record EngineMetrics(int running, int waiting, double kvUsage, int totalKvBlocks, int engineBlockSize) {

    public static final EngineMetrics UNKNOWN = new EngineMetrics(0, 0, 0, 0, 0);

    /** Reads the vLLM or SGLang metrics out of one exposition; {@code blockSize} converts SGLang's token counts. */
    public static EngineMetrics from(PrometheusText text, int blockSize) {
        int running = (int) Math.round(first(text, "vllm:num_requests_running", "sglang:num_running_reqs"));
        int waiting = (int) Math.round(first(text, "vllm:num_requests_waiting", "sglang:num_queue_reqs"));
        double usage = text.mean("vllm:kv_cache_usage_perc")
                .orElse(text.mean("vllm:gpu_cache_usage_perc").orElse(text.mean("sglang:token_usage").orElse(0)));
        int total = 0;
        int engineBlock = 0;
        var info = text.labels("vllm:cache_config_info");
        if (info != null) {
            total = parseInt(info.get("num_gpu_blocks"));
            engineBlock = parseInt(info.get("block_size"));
        } else {
            double tokens = text.sum("sglang:max_total_num_tokens").orElse(0);
            total = (int) (tokens / Math.max(1, blockSize));
        }
        return new EngineMetrics(running, waiting, Math.max(0, Math.min(1, usage)), total, engineBlock);
    }

    /** KV blocks in use, from the usage fraction. */
    public int activeKvBlocks() {
        return (int) Math.round(kvUsage * totalKvBlocks);
    }

    private static double first(PrometheusText text, String vllm, String sglang) {
        return text.sum(vllm).orElse(text.sum(sglang).orElse(0));
    }

    private static int parseInt(String s) {
        if (s == null || s.isBlank() || s.equals("None")) {
            return 0;
        }
        try {
            return (int) Double.parseDouble(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
