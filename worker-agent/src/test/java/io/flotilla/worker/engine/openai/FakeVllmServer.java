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
 * a usage chunk with empty choices, then {@code data: [DONE]}), OpenAI error bodies, {@code /metrics}
 * in Prometheus text, {@code /health} and {@code /reset_prefix_cache}.
 *
 * <p>With {@link #kvConnector} on it answers like vLLM started with
 * {@code --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'}: a non-streamed
 * prefill with {@code max_tokens: 1} and {@code kv_transfer_params.do_remote_decode} returns
 * {@code kv_transfer_params} with {@code do_remote_prefill: true}, the ids of the prompt's full
 * blocks ({@code remote_block_ids}; NixlConnector leaves the partial last block to the decode side),
 * its engine id and side-channel address ({@code remote_engine_id}, {@code remote_host},
 * {@code remote_port}) and {@code tp_size}; a request carrying {@code do_remote_prefill} must name
 * all of them (else 400, as the connector would fail it) and is recorded in
 * {@link #transferParamsReceived}. Without a connector {@code kv_transfer_params} is null.
 */
public final class FakeVllmServer implements AutoCloseable {

    /**
     * The engine's prefix cache as the fake models it: called with every request's prompt before it
     * is answered; returns the prompt tokens found cached (they become {@code cached_tokens}).
     */
    @FunctionalInterface
    public interface PromptCache {
        int admit(int[] prompt);
    }

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
    /** W3C {@code traceparent} of every {@code /v1/completions} request ("" when it carried none). */
    final List<String> traceparents = new CopyOnWriteArrayList<>();
    /** {@code kv_transfer_params} this engine returned for remote-decode prefills, as JSON objects. */
    final List<JsonNode> transferParamsIssued = new CopyOnWriteArrayList<>();
    /** {@code kv_transfer_params} of requests that asked this engine to pull a prompt's KV. */
    final List<JsonNode> transferParamsReceived = new CopyOnWriteArrayList<>();
    private final AtomicInteger nextBlockId = new AtomicInteger(1);
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
    volatile boolean kvConnector = true;
    volatile int blockSize = 16;
    volatile String engineId = "engine-a";
    volatile PromptCache cache;
    /**
     * Scripted answers: the token ids to stream for a request body (finish reason {@code stop}), or null
     * for {@link #tokens}. Lets whole-cluster tests play a model that calls tools or answers JSON.
     */
    volatile java.util.function.Function<JsonNode, int[]> replies;

    public FakeVllmServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(executor);
        server.createContext("/v1/completions", this::completions);
        server.createContext("/metrics", ex -> reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics));
        server.createContext("/health", ex -> reply(ex, healthStatus, "application/json", ""));
        server.createContext("/reset_prefix_cache", ex -> {
            cacheResets.incrementAndGet();
            reply(ex, 200, "application/json", "");
        });
        server.createContext("/v1/models", this::models);
        server.createContext("/v1/load_lora_adapter", this::loadLora);
        server.createContext("/v1/unload_lora_adapter", this::unloadLora);
        server.createContext("/v1/embeddings", this::embeddings);
        server.start();
    }

    /** Length of the pooling model's vectors; 0: a generative model, whose {@code /v1/embeddings} answers 400. */
    volatile int embeddingDimensions;
    /** The pooling model is a Matryoshka model (it honours {@code dimensions}). */
    volatile boolean matryoshka;
    /** Bodies of every {@code /v1/embeddings} request, in arrival order. */
    final List<JsonNode> embedRequests = new CopyOnWriteArrayList<>();

    /**
     * vLLM's embeddings endpoint as a pooling model answers it: one unit vector per token-id input, in the order
     * given; each value a function of the input's ids, so equal inputs give equal vectors.
     */
    private void embeddings(HttpExchange ex) throws IOException {
        JsonNode req = JSON.readTree(ex.getRequestBody().readAllBytes());
        embedRequests.add(req);
        int dims = embeddingDimensions;
        if (dims == 0) {
            reply(ex, 400, "application/json", "{\"object\":\"error\",\"message\":\"The model does not support "
                    + "Embeddings API\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}");
            return;
        }
        if (req.has("dimensions")) {
            if (!matryoshka) {
                reply(ex, 400, "application/json", "{\"object\":\"error\",\"message\":\"Model \\\"" + servedModel
                        + "\\\" does not support matryoshka representation, changing output dimensions will lead to "
                        + "poor results.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}");
                return;
            }
            dims = req.get("dimensions").asInt();
        }
        var root = JSON.createObjectNode().put("object", "list").put("model", servedModel);
        var data = root.putArray("data");
        int tokens = 0;
        for (int i = 0; i < req.path("input").size(); i++) {
            JsonNode ids = req.path("input").get(i);
            long sum = 0;
            for (JsonNode id : ids) {
                sum += id.asLong();
            }
            tokens += ids.size();
            double[] v = new double[dims];
            double norm = 0;
            for (int d = 0; d < dims; d++) {
                v[d] = Math.cos((sum + 1) * (d + 1) * 0.01);
                norm += v[d] * v[d];
            }
            var vector = data.addObject().put("object", "embedding").put("index", i).putArray("embedding");
            for (int d = 0; d < dims; d++) {
                vector.add((float) (v[d] / Math.sqrt(norm)));
            }
        }
        root.putObject("usage").put("prompt_tokens", tokens).put("total_tokens", tokens);
        reply(ex, 200, "application/json", root.toString());
    }

    /** LoRA adapters loaded in the fake engine (name → path), as {@code /v1/models} lists them. */
    final java.util.Map<String, String> loras = new java.util.concurrent.ConcurrentSkipListMap<>();
    /** {@code lora_name} of every load and unload call, in order ("+name", "-name"). */
    final List<String> loraCalls = new CopyOnWriteArrayList<>();
    /** The base model /v1/models lists and adapters name as their parent. */
    volatile String servedModel = "served-model";
    volatile long loraLoadDelayMs;

    /** vLLM's model list: the base model, then each LoRA module with {@code parent} and {@code root} (its path). */
    private void models(HttpExchange ex) throws IOException {
        var root = JSON.createObjectNode().put("object", "list");
        var data = root.putArray("data");
        data.addObject().put("id", servedModel).put("object", "model").put("root", servedModel).putNull("parent");
        loras.forEach((name, path) -> data.addObject().put("id", name).put("object", "model").put("root", path)
                .put("parent", servedModel));
        reply(ex, 200, "application/json", root.toString());
    }

    /** {@code POST /v1/load_lora_adapter {"lora_name", "lora_path"}}: 400 when it is loaded already, as vLLM answers. */
    private void loadLora(HttpExchange ex) throws IOException {
        JsonNode req = JSON.readTree(ex.getRequestBody().readAllBytes());
        String name = req.path("lora_name").asString();
        loraCalls.add("+" + name);
        if (loras.containsKey(name)) {
            reply(ex, 400, "application/json", "{\"object\":\"error\",\"message\":\"The lora adapter '" + name
                    + "' has already been loaded.\",\"type\":\"InvalidUserInput\",\"code\":400}");
            return;
        }
        try {
            Thread.sleep(loraLoadDelayMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        loras.put(name, req.path("lora_path").asString());
        reply(ex, 200, "text/plain", "Success: LoRA adapter '" + name + "' added successfully.");
    }

    private void unloadLora(HttpExchange ex) throws IOException {
        String name = JSON.readTree(ex.getRequestBody().readAllBytes()).path("lora_name").asString();
        loraCalls.add("-" + name);
        loras.remove(name);
        reply(ex, 200, "text/plain", "Success: LoRA adapter '" + name + "' removed successfully.");
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Bodies of every {@code /v1/completions} request, in arrival order. */
    public List<JsonNode> requests() {
        return List.copyOf(requests);
    }

    /** W3C {@code traceparent} of every {@code /v1/completions} request, "" for one without. */
    public List<String> traceparents() {
        return List.copyOf(traceparents);
    }

    /** {@code X-Request-Id} of every {@code /v1/completions} request. */
    public List<String> requestIds() {
        return List.copyOf(requestIds);
    }

    /** {@code kv_transfer_params} this engine returned for remote-decode prefills. */
    public List<JsonNode> transferParamsIssued() {
        return List.copyOf(transferParamsIssued);
    }

    /** {@code kv_transfer_params} of requests that made this engine pull a prompt's KV. */
    public List<JsonNode> transferParamsReceived() {
        return List.copyOf(transferParamsReceived);
    }

    /** Scripted answers by request body ({@code null}: the fixed tokens); see {@link #replies}. */
    public void setReplies(java.util.function.Function<JsonNode, int[]> replies) {
        this.replies = replies;
    }

    /** Whether it answers like an engine with NixlConnector (default) or without a KV connector. */
    public void setKvConnector(boolean on) {
        kvConnector = on;
    }

    /** What {@code /metrics} reports: running and waiting requests, KV usage, block size and {@code num_gpu_blocks}. */
    public void setMetrics(int running, int waiting, double usage, int blockSize, int gpuBlocks) {
        metrics = vllmMetrics(running, waiting, usage, blockSize, gpuBlocks);
    }

    /** The status {@code /health} answers (200 = healthy). */
    public void setHealthStatus(int status) {
        healthStatus = status;
    }

    public JsonNode lastRequest() {
        return requests.get(requests.size() - 1);
    }

    private void completions(HttpExchange ex) throws IOException {
        JsonNode req = JSON.readTree(ex.getRequestBody().readAllBytes());
        requests.add(req);
        requestIds.add(ex.getRequestHeaders().getFirst("X-Request-Id"));
        traceparents.add(java.util.Objects.requireNonNullElse(ex.getRequestHeaders().getFirst("traceparent"), ""));
        if (status != 200) {
            reply(ex, status, "application/json", errorBody);
            return;
        }
        int prompt = req.path("prompt").size();
        JsonNode kv = req.path("kv_transfer_params");
        if (kv.path("do_remote_prefill").asBoolean(false)) {
            for (String field : List.of("remote_engine_id", "remote_block_ids", "remote_host", "remote_port")) {
                if (kv.path(field).isMissingNode() || kv.path(field).isNull()) {
                    reply(ex, 400, "application/json", "{\"object\":\"error\",\"message\":\"kv_transfer_params."
                            + field + " is required with do_remote_prefill\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}");
                    return;
                }
            }
            transferParamsReceived.add(kv);
        }
        PromptCache c = cache;
        int cached = c == null ? cachedTokens : c.admit(promptIds(req));
        if (!req.path("stream").asBoolean(false)) {
            reply(ex, 200, "application/json", """
                    {"id":"cmpl-p1","object":"text_completion","created":1700000000,"model":"m","choices":[{"index":0,\
                    "text":"A","logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":[%d],\
                    "prompt_logprobs":null}],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":1,\
                    "prompt_tokens_details":{"cached_tokens":%d}},"kv_transfer_params":%s}"""
                    .formatted(tokens[0], prompt, prompt + 1, cached, transferParams(req, prompt)));
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.sendResponseHeaders(200, 0);
        openStreams.incrementAndGet();
        var scripted = replies;
        int[] answer = scripted == null ? null : scripted.apply(req);
        int[] stream = answer != null ? answer : tokens;
        String lastFinish = answer != null ? "stop" : finishReason;
        int logprobs = req.path("logprobs").isInt() ? req.path("logprobs").asInt() : -1;
        try (OutputStream out = ex.getResponseBody()) {
            int n = endless ? 100_000 : stream.length;
            for (int i = 0; i < n; i++) {
                int id = stream[i % stream.length];
                String finish = !endless && i == n - 1 ? "\"" + lastFinish + "\"" : "null";
                String ids = tokenIds ? ",\"token_ids\":[" + id + "]" : "";
                String promptIds = i == 0 && tokenIds ? req.path("prompt").toString() : "null";
                send(out, "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1700000000,\"model\":\"m\","
                        + "\"choices\":[{\"index\":0,\"text\":\"t" + id + "\",\"logprobs\":" + logprobs(id, logprobs)
                        + ",\"finish_reason\":" + finish
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
                    + n + ",\"prompt_tokens_details\":{\"cached_tokens\":" + cached + "}}}");
            send(out, "[DONE]");
        } catch (IOException e) {
            disconnects.incrementAndGet();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            openStreams.decrementAndGet();
        }
    }

    /**
     * vLLM's completions {@code logprobs} of one token with {@code return_tokens_as_token_ids}: the token at
     * -0.5, alternatives {@code id+1 …} at -1.5, -2.5, …, and the sampled token added to the {@code n}
     * alternatives (vLLM returns up to n + 1). {@code null} when the request asked for none.
     */
    static String logprobs(int id, int n) {
        if (n < 0) {
            return "null";
        }
        StringBuilder top = new StringBuilder("{\"token_id:" + id + "\":-0.5");
        for (int k = 1; k <= n; k++) {
            top.append(",\"token_id:").append(id + k).append("\":").append(-0.5 - k);
        }
        return "{\"text_offset\":[0],\"token_logprobs\":[-0.5],\"tokens\":[\"token_id:" + id + "\"],\"top_logprobs\":["
                + top + "}]}";
    }

    /**
     * NixlConnector's {@code request_finished}: params only for a length-capped one-token prefill that
     * asked for a remote decode; the blocks stay with this engine for the decode engine to read.
     */
    private String transferParams(JsonNode req, int prompt) {
        if (!kvConnector || !req.path("kv_transfer_params").path("do_remote_decode").asBoolean(false)
                || req.path("max_tokens").asInt(16) != 1) {
            return "null";
        }
        StringBuilder ids = new StringBuilder();
        for (int b = 0; b < prompt / blockSize; b++) {
            ids.append(ids.length() == 0 ? "" : ",").append(nextBlockId.getAndIncrement());
        }
        String params = "{\"do_remote_prefill\":true,\"do_remote_decode\":false,\"remote_block_ids\":[" + ids
                + "],\"remote_engine_id\":\"" + engineId + "\",\"remote_host\":\"10.0.0.1\",\"remote_port\":5600,\"tp_size\":1}";
        transferParamsIssued.add(JSON.readTree(params));
        return params;
    }

    private static int[] promptIds(JsonNode req) {
        JsonNode p = req.path("prompt");
        int[] ids = new int[p.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = p.get(i).asInt();
        }
        return ids;
    }

    /** One SSE event: {@code data: <data>} and a blank line. */
    public static void send(OutputStream out, String data) throws IOException {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** A whole response; an empty body is sent without one. */
    public static void reply(HttpExchange ex, int status, String type, String body) throws IOException {
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
