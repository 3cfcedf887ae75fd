package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.vllm.FakePrefixCache;
import io.flotilla.worker.engine.vllm.FakeVllmPublisher;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.flotilla.worker.engine.vllm.MsgspecWire.batchArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.batchMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedMap;

/**
 * One fake vLLM engine process, as a worker agent sees it: the OpenAI HTTP server
 * ({@link FakeVllmServer}) and the ZMQ KV event publisher with its replay socket
 * ({@link FakeVllmPublisher}), joined by a prefix cache.
 *
 * <p>Every prompt it serves is cached: its full blocks not cached yet get fresh engine hashes
 * (seeded random 64-bit values, like vLLM's per-process hashes, often ≥ 2^63) and one
 * {@code KVEventBatch} with a {@code BlockStored} (parent hash, {@code token_ids}, {@code block_size})
 * announces them, in the wire form this engine speaks. {@code cached_tokens} in usage counts the
 * prompt's leading cached blocks, never the whole prompt (vLLM then recomputes the last block).
 * Nothing is ever evicted.
 */
public final class FakeVllmEngine implements AutoCloseable {

    /** The two msgpack forms vLLM has shipped: positional arrays (older) and tagged maps (newer). */
    public enum WireForm { ARRAY, MAP }

    private final FakeVllmServer http;
    private final FakeVllmPublisher events;
    private final WireForm form;
    private final int blockSize;
    private final FakePrefixCache cache;
    private final List<int[]> prompts = new ArrayList<>();
    private int batches;
    private boolean loseNext;

    private FakeVllmEngine(WireForm form, int blockSize, long seed) throws IOException {
        this.form = form;
        this.blockSize = blockSize;
        this.cache = new FakePrefixCache(blockSize, seed);
        this.events = new FakeVllmPublisher("kv-events");
        try {
            this.http = new FakeVllmServer();
        } catch (IOException e) {
            events.close();
            throw e;
        }
        http.blockSize = blockSize;
        http.engineId = "fake-vllm-" + form.name().toLowerCase(java.util.Locale.ROOT) + "-" + seed;
        http.metrics = FakeVllmServer.vllmMetrics(0, 0, 0.0, blockSize, 4096);
        http.cache = this::admit;
    }

    /** A started engine on loopback ports: HTTP, KV event PUB and replay ROUTER. */
    public static FakeVllmEngine start(WireForm form, int blockSize, long seed) throws IOException {
        return new FakeVllmEngine(form, blockSize, seed);
    }

    public String url() {
        return http.url();
    }

    public String kvEvents() {
        return events.endpoint();
    }

    public String kvEventsReplay() {
        return events.replayEndpoint();
    }

    public WireForm wireForm() {
        return form;
    }

    /** The HTTP side, for settings and what it received. */
    public FakeVllmServer server() {
        return http;
    }

    /** Blocks until a subscriber connected to the KV event socket; call before the first request. */
    public void awaitSubscriber(Duration timeout) {
        events.awaitSubscriber(timeout);
    }

    /** The next KV event batch goes to the replay buffer only, so the subscriber sees a sequence gap. */
    public synchronized void loseNextBatch() {
        loseNext = true;
    }

    /** Prompts served so far, in order. */
    public synchronized List<int[]> prompts() {
        return List.copyOf(prompts);
    }

    /** KV event batches emitted (published or lost). */
    public synchronized int batches() {
        return batches;
    }

    /** Requests that reached the replay socket. */
    public int replayRequests() {
        return events.replayRequests();
    }

    private synchronized int admit(int[] prompt) {
        prompts.add(prompt.clone());
        FakePrefixCache.Admission a = cache.admit(prompt);
        if (!a.stored().isEmpty()) {
            publish(a.stored(), a.parent(), a.tokens());
        }
        int cachedTokens = a.hitBlocks() * blockSize;
        return cachedTokens < prompt.length ? cachedTokens : cachedTokens - blockSize;
    }

    private void publish(List<Object> hashes, Object parent, int[] tokens) {
        double ts = 1_700_000_000.0 + batches;
        byte[] payload = form == WireForm.ARRAY
                ? batchArray(ts, List.of(storedArray(hashes, parent, tokens, blockSize, null, null, true)), null)
                : batchMap(ts, List.of(storedMap(hashes, parent, tokens, blockSize, null, "GPU")), null);
        batches++;
        if (loseNext) {
            loseNext = false;
            events.publishLost(payload);
        } else {
            events.publish(payload);
        }
    }

    @Override
    public void close() {
        http.close();
        events.close();
    }
}
