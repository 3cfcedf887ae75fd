package io.flotilla.worker.engine.sglang;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.flotilla.worker.engine.openai.FakeVllmServer;
import io.flotilla.worker.engine.vllm.FakePrefixCache;
import io.flotilla.worker.engine.vllm.FakeVllmPublisher;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static io.flotilla.worker.engine.vllm.MsgspecWire.batchArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedArray;

/**
 * One SGLang server as a worker agent sees it on the wire, written from SGLang's sources:
 * <ul>
 *   <li>{@code POST /generate} ({@code GenerateReqInput}: {@code input_ids}, {@code sampling_params},
 *       {@code stream}, {@code rid}) streamed as SSE: {@code data: {"text": …, "output_ids": [...],
 *       "meta_info": {"id", "finish_reason", "prompt_tokens", "completion_tokens", "cached_tokens"}}} per
 *       token, then {@code data: [DONE]}. By default {@code output_ids} and {@code text} are cumulative (SGLang's
 *       default); with {@link #incremental} they are deltas ({@code --incremental-streaming-output}); with
 *       {@link #skipTokenizer} there is no text ({@code --skip-tokenizer-init}). {@code finish_reason} is null,
 *       then {@code {"type": "length", "length": n}} or {@code {"type": "stop", "matched": id}};</li>
 *   <li>{@code GET /get_server_info}: server args ({@code page_size}, {@code model_path}) with the
 *       scheduler's {@code max_total_num_tokens};</li>
 *   <li>{@code /metrics} with {@code sglang:num_running_reqs}, {@code sglang:num_queue_reqs},
 *       {@code sglang:token_usage}; {@code /health}; {@code POST /flush_cache};</li>
 *   <li>KV events as {@code --kv-events-config '{"publisher":"zmq",…}'} publishes them (SGLang's
 *       {@code ZmqEventPublisher}): {@code [topic, seq, msgpack]} with array-like batches
 *       {@code [ts, events, attn_dp_rank]} and events {@code ["BlockStored", hashes, parent, token_ids,
 *       page_size, lora_id, medium]} where medium is {@code "GPU"}; one page per block.</li>
 * </ul>
 * Every prompt is cached by full pages, as SGLang's radix cache with {@code --page-size} does.
 */
public final class FakeSglangEngine implements AutoCloseable {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fake-sglang-http");
        t.setDaemon(true);
        return t;
    });
    private final FakeVllmPublisher events = new FakeVllmPublisher("kv-events");
    private final int pageSize;
    private final FakePrefixCache cache;
    private final List<int[]> prompts = new ArrayList<>();
    final List<JsonNode> requests = new CopyOnWriteArrayList<>();
    volatile int[] tokens = {101, 102, 103};
    volatile boolean incremental;
    volatile boolean skipTokenizer;
    volatile long maxTotalTokens = 32_000;
    volatile int flushes;
    private int batches;

    private FakeSglangEngine(int pageSize, long seed) throws IOException {
        this.pageSize = pageSize;
        this.cache = new FakePrefixCache(pageSize, seed);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(executor);
        server.createContext("/generate", this::generate);
        server.createContext("/get_server_info", ex -> reply(ex, 200, "application/json", """
                {"model_path":"fake/model","tokenizer_path":"fake/model","page_size":%d,"incremental_streaming_output":%s,\
                "skip_tokenizer_init":%s,"status":"ready","max_total_num_tokens":%d,"max_req_input_len":%d,\
                "internal_states":[{"last_gen_throughput":0.0}],"version":"0.5.0"}"""
                .formatted(pageSize, incremental, skipTokenizer, maxTotalTokens, maxTotalTokens - 6)));
        server.createContext("/metrics", ex -> reply(ex, 200, "text/plain; version=0.0.4", """
                # HELP sglang:num_running_reqs The number of running requests.
                # TYPE sglang:num_running_reqs gauge
                sglang:num_running_reqs{model_name="fake/model",engine_type="unified",tp_rank="0",pp_rank="0"} 0.0
                # HELP sglang:num_queue_reqs The number of requests in the waiting queue.
                # TYPE sglang:num_queue_reqs gauge
                sglang:num_queue_reqs{model_name="fake/model",engine_type="unified",tp_rank="0",pp_rank="0"} 0.0
                # HELP sglang:token_usage The token usage.
                # TYPE sglang:token_usage gauge
                sglang:token_usage{model_name="fake/model",engine_type="unified",tp_rank="0",pp_rank="0"} 0.125
                """));
        server.createContext("/health", ex -> reply(ex, 200, "text/plain", ""));
        server.createContext("/flush_cache", ex -> {
            flushes++;
            reply(ex, 200, "text/plain", "Cache flushed.");
        });
        server.start();
    }

    public static FakeSglangEngine start(int pageSize, long seed) throws IOException {
        return new FakeSglangEngine(pageSize, seed);
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public String kvEvents() {
        return events.endpoint();
    }

    public String kvEventsReplay() {
        return events.replayEndpoint();
    }

    public void awaitSubscriber(Duration timeout) {
        events.awaitSubscriber(timeout);
    }

    /** Streams deltas ({@code --incremental-streaming-output}) instead of cumulative output. */
    public void setIncremental(boolean on) {
        incremental = on;
    }

    /** Sends no text, only ids ({@code --skip-tokenizer-init}). */
    public void setSkipTokenizer(boolean on) {
        skipTokenizer = on;
    }

    public List<JsonNode> requests() {
        return List.copyOf(requests);
    }

    public synchronized List<int[]> prompts() {
        return List.copyOf(prompts);
    }

    private void generate(HttpExchange ex) throws IOException {
        JsonNode req = JSON.readTree(ex.getRequestBody().readAllBytes());
        requests.add(req);
        JsonNode ids = req.path("input_ids");
        if (!ids.isArray() || ids.isEmpty()) {
            reply(ex, 400, "application/json", "{\"error\":{\"message\":\"input_ids is required\"}}");
            return;
        }
        int[] prompt = new int[ids.size()];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = ids.get(i).asInt();
        }
        int cachedTokens = admit(prompt);
        int max = req.path("sampling_params").path("max_new_tokens").asInt(128);
        int[] out = tokens;
        int n = Math.min(max, out.length);
        String rid = req.path("rid").asString("rid-0");
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.sendResponseHeaders(200, 0);
        try (OutputStream os = ex.getResponseBody()) {
            StringBuilder text = new StringBuilder();
            List<Integer> all = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                all.add(out[i]);
                text.append('t').append(out[i]);
                boolean last = i == n - 1;
                String finish = !last ? "null" : n == max ? "{\"type\":\"length\",\"length\":" + n + "}"
                        : "{\"type\":\"stop\",\"matched\":" + out[i] + "}";
                String idsJson = incremental ? "[" + out[i] + "]" : all.toString().replace(" ", "");
                String textJson = skipTokenizer ? "" : "\"text\":\"" + (incremental ? "t" + out[i] : text) + "\",";
                send(os, "{" + textJson + "\"output_ids\":" + idsJson + ",\"meta_info\":{\"id\":\"" + rid
                        + "\",\"finish_reason\":" + finish + ",\"prompt_tokens\":" + prompt.length
                        + ",\"weight_version\":\"default\",\"completion_tokens\":" + (i + 1) + ",\"cached_tokens\":"
                        + cachedTokens + "}}");
            }
            send(os, "[DONE]");
        }
    }

    /** Caches the prompt's full pages; returns the prompt tokens that were cached before (whole pages). */
    private synchronized int admit(int[] prompt) {
        prompts.add(prompt.clone());
        FakePrefixCache.Admission a = cache.admit(prompt);
        if (!a.stored().isEmpty()) {
            events.publish(batchArray(1_700_000_000.0 + batches++, List.of(storedArray(a.stored(), a.parent(),
                    a.tokens(), pageSize, null, "GPU", false)), 0));
        }
        return Math.min(a.hitBlocks() * pageSize, prompt.length - 1);
    }

    private static void send(OutputStream out, String data) throws IOException {
        FakeVllmServer.send(out, data);
    }

    private static void reply(HttpExchange ex, int status, String type, String body) throws IOException {
        FakeVllmServer.reply(ex, status, type, body);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        events.close();
    }
}
