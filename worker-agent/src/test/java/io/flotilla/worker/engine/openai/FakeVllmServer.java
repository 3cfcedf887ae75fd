package io.flotilla.worker.engine.openai;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * vLLM's OpenAI-compatible server as the worker sees it on the wire: {@code POST /v1/completions}
 * streamed as SSE ({@code data: {"id":…,"object":"text_completion",…,"choices":[{"index":0,"text":…,
 * "token_ids":[…],"finish_reason":null}]}} per token, the last choice chunk with its finish reason,
 * a usage chunk with empty choices, then {@code data: [DONE]}), the non-streamed response with
 * {@code kv_transfer_params} for a remote-decode prefill, OpenAI error bodies, {@code /metrics} in
 * Prometheus text, {@code /health} and {@code /reset_prefix_cache}.
 */
final class FakeVllmServer implements AutoCloseable {

    static String vllmMetrics(int running, int waiting, double usage, int blockSize, int gpuBlocks) {
        return """
                # HELP vllm:num_requests_running Number of requests in model execution batches.
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{engine="0",model_name="m"} %d.0
                # HELP vllm:num_requests_waiting Number of requests waiting to be processed.
                # TYPE vllm:num_requests_waiting gauge
                vllm:num_requests_waiting{engine="0",model_name="m"} %d.0
                # HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
                # TYPE vllm:kv_cache_usage_perc gauge
                vllm:kv_cache_usage_perc{engine="0",model_name="m"} %s
                # HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
                # TYPE vllm:cache_config_info gauge
                vllm:cache_config_info{block_size="%d",cache_dtype="auto",calculate_kv_scales="False",cpu_offload_gb="0",enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.9",is_attention_free="False",num_cpu_blocks="None",num_gpu_blocks="%d",num_gpu_blocks_override="None",prefix_caching_hash_algo="sha256",sliding_window="None",swap_space="4",swap_space_bytes="4294967296"} 1.0
                # HELP vllm:prompt_tokens_total Number of prefill tokens processed.
                # TYPE vllm:prompt_tokens_total counter
                vllm:prompt_tokens_total{engine="0",model_name="m"} 1234.0
                """.formatted(running, waiting, Double.toString(usage), blockSize, gpuBlocks);
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fake-vllm-http");
        t.setDaemon(true);
        return t;
    });
    final List<JsonNode> requests = new CopyOnWriteArrayList<>();
    final List<String> requestIds = new CopyOnWriteArrayList<>();
    final AtomicInteger disconnects = new AtomicInteger();
    final AtomicInteger cacheResets = new AtomicInteger();
    final AtomicInteger openStreams = new AtomicInteger();

    volatile int status = 200;
    volatile String errorBody = "";
    volatile int[] tokens = {101, 102, 103};
    volatile boolean tokenIds = true;
    volatile String finishReason = "length";
    volatile int cachedTokens;
    volatile long tokenDelayMs;
    /** Keep streaming until the client goes away (for cancellation). */
    volatile boolean endless;
    /** Put this error object into the stream after the first token. */
    volatile String streamError;
    volatile int healthStatus = 200;
    volatile String metrics = vllmMetrics(3, 2, 0.25, 16, 2048);

    FakeVllmServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(executor);
        server.createContext("/v1/completions", this::completions);
        server.createContext("/metrics", ex -> reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics));
        server.createContext("/health", ex -> reply(ex, healthStatus, "application/json", ""));
        server.createContext("/reset_prefix_cache", ex -> {
            cacheResets.incrementAndGet();
            reply(ex, 200, "application/json", "");
        });
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    JsonNode lastRequest() {
        return requests.get(requests.size() - 1);
    }

    private void completions(HttpExchange ex) throws IOException {
        JsonNode req = JSON.readTree(ex.getRequestBody().readAllBytes());
        requests.add(req);
        requestIds.add(ex.getRequestHeaders().getFirst("X-Request-Id"));
        if (status != 200) {
            reply(ex, status, "application/json", errorBody);
            return;
        }
        int prompt = req.path("prompt").size();
        if (!req.path("stream").asBoolean(false)) {
            reply(ex, 200, "application/json", """
                    {"id":"cmpl-p1","object":"text_completion","created":1700000000,"model":"m","choices":[{"index":0,\
                    "text":"A","logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":[%d],\
                    "prompt_logprobs":null}],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":1,\
                    "prompt_tokens_details":{"cached_tokens":%d}},"kv_transfer_params":{"do_remote_prefill":true,\
                    "do_remote_decode":false,"remote_block_ids":[1,2,3],"remote_engine_id":"engine-a",\
                    "remote_host":"10.0.0.1","remote_port":5600,"tp_size":1}}""".formatted(tokens[0], prompt, prompt + 1, cachedTokens));
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.sendResponseHeaders(200, 0);
        openStreams.incrementAndGet();
        try (OutputStream out = ex.getResponseBody()) {
            int n = endless ? 100_000 : tokens.length;
            for (int i = 0; i < n; i++) {
                int id = tokens[i % tokens.length];
                String finish = !endless && i == n - 1 ? "\"" + finishReason + "\"" : "null";
                String ids = tokenIds ? ",\"token_ids\":[" + id + "]" : "";
                String promptIds = i == 0 && tokenIds ? req.path("prompt").toString() : "null";
                send(out, "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1700000000,\"model\":\"m\","
                        + "\"choices\":[{\"index\":0,\"text\":\"t" + id + "\",\"logprobs\":null,\"finish_reason\":" + finish
                        + ",\"stop_reason\":null" + ids + ",\"prompt_logprobs\":null,\"prompt_token_ids\":" + promptIds
                        + "}],\"usage\":null}");
                if (i == 0 && streamError != null) {
                    send(out, streamError);
                    return;
                }
                if (tokenDelayMs > 0) {
                    Thread.sleep(tokenDelayMs);
                }
            }
            send(out, "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1700000000,\"model\":\"m\",\"choices\":[],"
                    + "\"usage\":{\"prompt_tokens\":" + prompt + ",\"total_tokens\":" + (prompt + n) + ",\"completion_tokens\":"
                    + n + ",\"prompt_tokens_details\":{\"cached_tokens\":" + cachedTokens + "}}}");
            send(out, "[DONE]");
        } catch (IOException e) {
            disconnects.incrementAndGet();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            openStreams.decrementAndGet();
        }
    }

    private static void send(OutputStream out, String data) throws IOException {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void reply(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
