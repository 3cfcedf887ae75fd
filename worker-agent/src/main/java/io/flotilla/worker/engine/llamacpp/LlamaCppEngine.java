package io.flotilla.worker.engine.llamacpp;

import de.kherud.llama.InferenceParameters;
import de.kherud.llama.LlamaIterator;
import de.kherud.llama.LlamaModel;
import de.kherud.llama.LlamaOutput;
import de.kherud.llama.ModelParameters;
import io.flotilla.gguf.BpeVocabulary;
import io.flotilla.gguf.GgufFile;
import io.flotilla.gguf.GgufReader;
import io.flotilla.gguf.TokenizerFiles;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineLoad;
import io.flotilla.worker.engine.EngineMeasurements;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.KvEventListener;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.ResidentBlocks;
import io.flotilla.worker.engine.SamplingOptions;
import io.flotilla.worker.engine.TimingEstimate;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.engine.openai.TimingLearner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * llama.cpp in the worker's process, through java-llama.cpp ({@code de.kherud:llama}): real forward passes on the
 * CPU, its own prompt cache and continuous batching over {@link LlamaCppSettings#slots()} slots.
 *
 * <p>Prompts go in as token ids (the gateway's tokenization is the one the engine runs) and every request is pinned
 * to a slot the worker chooses — the idle slot whose cache serves most of the prompt, else the least recently used —
 * so {@link CacheMirror} knows what each slot holds and publishes it as KV events: this engine has none of its own.
 * The engine's own count of reused tokens ({@link EngineLog}) checks the mirror on every request where it can be
 * read; a disagreement is counted and logged. Generated ids come from the streamed text ({@link TokenPieces}).
 *
 * <p>What the binding cannot do is refused by name, never attempted: log-probabilities (asking for them aborts the
 * JVM in the binding's JSON glue), tenant-salted KV, LoRA adapters, KV transfer. Stop strings stay with the gateway
 * (the engine would hold back text that might start one, merging tokens in its stream). Sampling fields the client
 * left out are left out here too, so llama.cpp's own defaults apply (temperature 0.8, top_k 40, top_p 0.95,
 * min_p 0.05); repetition_penalty is llama.cpp's repeat penalty over its last 64 tokens.
 */
public final class LlamaCppEngine implements Engine, EngineMeasurements {

    private static final Logger log = LoggerFactory.getLogger(LlamaCppEngine.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final EngineCapabilities CAPABILITIES = EngineCapabilities.newBuilder()
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_TOP_P).addFeatures(SamplingFeature.SAMPLING_FEATURE_TOP_K)
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_MIN_P)
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_PRESENCE_PENALTY)
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_FREQUENCY_PENALTY)
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_REPETITION_PENALTY)
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_LOGIT_BIAS)
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_JSON_OBJECT)
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA)
            .build();
    /** The binding's request parameters, whose setters cannot give token ids or a slot. */
    private static final Field PARAMETERS = parametersField();

    private final LlamaCppSettings settings;
    private final BlockHasher hasher;
    private final Clock clock;
    private final LlamaModel model;
    private final TokenPieces pieces;
    private final int vocabSize;
    private final CacheMirror mirror;
    private final Active[] running;
    private final long[] lastUsed;
    private final ArrayDeque<Active>[] awaitingCount;
    private final ArrayDeque<Active> waiting = new ArrayDeque<>();
    private final ExecutorService pumps;
    private final Optional<EngineLog> engineLog;
    private final TimingLearner timing = new TimingLearner(64, 4);
    private final LlamaCppCounters counters = new LlamaCppCounters();
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private final KvEventListener listener;
    private long position;
    private long uses;
    private boolean draining;
    private boolean closed;
    private volatile double lastStepMs;

    private LlamaCppEngine(LlamaCppSettings settings, BlockHasher hasher, Clock clock, LlamaModel model,
                           BpeVocabulary vocab, EngineListeners listeners, String name) {
        this.settings = settings;
        this.listener = listeners.kvEvents();
        this.hasher = hasher;
        this.clock = clock;
        this.model = model;
        this.pieces = new TokenPieces(vocab);
        this.vocabSize = vocab.tokens().size();
        this.mirror = new CacheMirror(settings.slots(), hasher);
        this.running = new Active[settings.slots()];
        this.lastUsed = new long[settings.slots()];
        @SuppressWarnings("unchecked")
        ArrayDeque<Active>[] awaiting = new ArrayDeque[settings.slots()];
        for (int i = 0; i < awaiting.length; i++) {
            awaiting[i] = new ArrayDeque<>();
        }
        this.awaitingCount = awaiting;
        this.pumps = Executors.newFixedThreadPool(settings.slots(), r -> {
            Thread t = new Thread(r, name + "-slot");
            t.setDaemon(true);
            return t;
        });
        this.engineLog = EngineLog.open(this::engineReused);
        if (engineLog.isEmpty()) {
            log.info("{}: standard output is not a file; the cache mirror's reuse is reported unchecked", name);
        }
    }

    /**
     * Loads {@code settings.gguf()} and starts the engine.
     *
     * @throws IllegalStateException in one line when the machine cannot run the binding (no AVX2, no libgomp) or the
     *                               model cannot be loaded
     */
    public static LlamaCppEngine start(LlamaCppSettings settings, BlockHasher hasher, Clock clock,
                                       EngineListeners listeners, String name) {
        BpeVocabulary vocab;
        GgufFile gguf;
        try {
            gguf = GgufReader.read(settings.gguf());
            vocab = TokenizerFiles.vocabulary(gguf, settings.gguf().getFileName().toString());
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("llama-cpp: cannot read " + settings.gguf() + ": " + e.getMessage(), e);
        }
        long trained = gguf.contextLength().orElse(Long.MAX_VALUE);
        if (settings.contextPerSlot() > trained) {
            throw new IllegalStateException("llama-cpp: context-per-slot " + settings.contextPerSlot() + " exceeds the "
                    + "model's trained context of " + trained + " tokens");
        }
        checkMachine();
        LlamaModel model = load(settings);
        return new LlamaCppEngine(settings, hasher, clock, model, vocab, listeners, name);
    }

    private static void checkMachine() {
        try {
            String cpu = Files.readString(Path.of("/proc/cpuinfo"));
            if (!cpu.contains(" avx2")) {
                throw new IllegalStateException("llama-cpp: this CPU has no AVX2, which the bundled llama.cpp build needs");
            }
        } catch (IOException e) {
            log.debug("cannot read /proc/cpuinfo: {}", e.toString());
        }
    }

    private static LlamaModel load(LlamaCppSettings s) {
        try {
            Files.createDirectories(s.nativeDir());
            // The binding deletes entries named llama* and jllama* in its folder on first load: give it its own.
            System.setProperty("de.kherud.llama.tmpdir", s.nativeDir().toString());
            ModelParameters params = new ModelParameters().setModel(s.gguf().toString())
                    .setThreads(s.threads()).setThreadsBatch(s.threads())
                    .setParallel(s.slots()).setCtxSize(s.slots() * s.contextPerSlot())
                    .enableContBatching().disableContextShift().skipWarmup();
            return new LlamaModel(params);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            throw new IllegalStateException("llama-cpp: the native llama.cpp library does not load (it needs glibc "
                    + ">= 2.17, libgomp1 — apt-get install libgomp1 — and an x86_64 CPU with AVX2): " + e.getMessage(), e);
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("llama-cpp: cannot load " + s.gguf() + ": " + e.getMessage(), e);
        }
    }

    private static Field parametersField() {
        try {
            Field f = InferenceParameters.class.getSuperclass().getDeclaredField("parameters");
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new ExceptionInInitializerError("java-llama.cpp changed: no parameters map to give token ids (" + e + ")");
        }
    }

    // ------------------------------------------------------------------------------------------ requests

    /** One request from submit to its terminal callback. */
    private final class Active implements RequestHandle {
        final EngineRequest request;
        final TokenSink sink;
        int slot = -1;
        int predicted;
        Integer engineCount;
        boolean alone;
        long startedNanos;
        long firstTokenNanos;
        /** The ids streamed so far. */
        final List<Integer> ids = new ArrayList<>();
        boolean exact = true;
        volatile boolean stopped;
        private boolean ended;

        Active(EngineRequest request, TokenSink sink) {
            this.request = request;
            this.sink = sink;
        }

        int generated() {
            return ids.size();
        }

        @Override
        public String requestId() {
            return request.requestId();
        }

        @Override
        public void cancel() {
            stopped = true;
            boolean queued;
            synchronized (LlamaCppEngine.this) {
                queued = waiting.remove(this);
            }
            finish(FinishReason.FINISH_REASON_CANCELLED, null);
            if (queued) {
                settle();
            }
        }

        /** Delivers the one terminal callback (later ones are ignored). */
        void finish(FinishReason reason, Throwable error) {
            int cached;
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
            }
            synchronized (LlamaCppEngine.this) {
                cached = engineCount != null ? engineCount : predicted;
            }
            if (error != null) {
                sink.onError(error);
            } else {
                sink.onFinish(reason, request.promptTokens().length, slot < 0 ? 0 : cached, generated());
            }
        }

        synchronized boolean ended() {
            return ended;
        }
    }

    @Override
    public RequestHandle submit(EngineRequest request, TokenSink sink) {
        validate(request);
        Active a = new Active(request, sink);
        synchronized (this) {
            if (closed || draining) {
                throw new EngineUnavailableException("the llama-cpp engine is " + (closed ? "closed" : "draining"));
            }
            int[] idle = idleSlots();
            if (idle.length == 0) {
                if (waiting.size() >= settings.maxWaiting()) {
                    throw new EngineOverloadedException("all " + settings.slots() + " llama-cpp slots are busy and "
                            + waiting.size() + " requests wait");
                }
                waiting.add(a);
                return a;
            }
            dispatch(a, mirror.best(idle, request.promptTokens()));
        }
        return a;
    }

    private void validate(EngineRequest r) {
        int[] prompt = r.promptTokens();
        if (prompt.length == 0) {
            throw new InvalidRequestException("the prompt is empty");
        }
        for (int i = 0; i < prompt.length; i++) {
            if (prompt[i] < 0 || prompt[i] >= vocabSize) {
                throw new InvalidRequestException("prompt token at index " + i + " is " + prompt[i]
                        + ", outside the vocabulary [0, " + vocabSize + ")");
            }
        }
        if ((long) prompt.length + r.maxTokens() > settings.contextPerSlot()) {
            throw new InvalidRequestException("prompt (" + prompt.length + " tokens) plus max tokens (" + r.maxTokens()
                    + ") exceeds a llama-cpp slot's context of " + settings.contextPerSlot() + " tokens");
        }
        if (r.scope().hasLora()) {
            throw new InvalidRequestException("the llama-cpp engine serves no LoRA adapter ('" + r.scope().loraName() + "')");
        }
        if (r.scope().salted()) {
            throw new InvalidRequestException("the llama-cpp engine cannot keep tenants' KV apart (no cache salt)");
        }
        SamplingOptions o = r.options();
        for (SamplingFeature f : o.featuresUsed()) {
            if (!CAPABILITIES.getFeaturesList().contains(f)) {
                throw new InvalidRequestException("the llama-cpp engine cannot honour "
                        + f.name().substring("SAMPLING_FEATURE_".length()).toLowerCase(java.util.Locale.ROOT)
                        + " (log-probabilities are not reachable through its Java binding)");
            }
        }
        for (int id : o.logitBias().keySet()) {
            if (id < 0 || id >= vocabSize) {
                throw new InvalidRequestException("logit_bias names token " + Integer.toUnsignedString(id)
                        + ", outside the vocabulary [0, " + vocabSize + ")");
            }
        }
    }

    /** Idle slots, least recently used first. Caller holds the lock. */
    private int[] idleSlots() {
        List<Integer> idle = new ArrayList<>();
        for (int s = 0; s < running.length; s++) {
            if (running[s] == null) {
                idle.add(s);
            }
        }
        idle.sort((x, y) -> Long.compare(lastUsed[x], lastUsed[y]));
        return idle.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Starts {@code a} on {@code slot}. Caller holds the lock. */
    private void dispatch(Active a, int slot) {
        int[] prompt = a.request.promptTokens();
        a.slot = slot;
        a.predicted = mirror.reuse(slot, prompt);
        a.alone = Arrays.stream(running).allMatch(r -> r == null);
        a.startedNanos = System.nanoTime();
        running[slot] = a;
        lastUsed[slot] = ++uses;
        if (engineLog.isPresent()) {
            awaitingCount[slot].add(a);
        } else {
            counters.unchecked.incrementAndGet();
        }
        counters.promptTokens.addAndGet(prompt.length);
        counters.predictedReused.addAndGet(a.predicted);
        publish(mirror.hold(slot, prompt));
        Map<String, String> params = params(a.request, slot);
        pumps.execute(() -> pump(a, params));
    }

    /** The engine's count for the prompt just started on {@code slot} (from {@link EngineLog}). */
    private synchronized void engineReused(int slot, int tokens) {
        if (slot < 0 || slot >= awaitingCount.length) {
            return;
        }
        Active a = awaitingCount[slot].poll();
        if (a == null || a.sink == NO_SINK) {
            return;
        }
        a.engineCount = tokens;
        counters.engineReused.addAndGet(tokens);
        counters.evaluated.addAndGet(a.request.promptTokens().length - tokens);
        if (tokens == a.predicted) {
            counters.agree.incrementAndGet();
        } else {
            counters.disagree.incrementAndGet();
            log.warn("llama-cpp slot {}: request {} reused {} prompt tokens, the cache mirror predicted {}", slot,
                    a.requestId(), tokens, a.predicted);
        }
    }

    /**
     * The binding's request for {@code r} on {@code slot}, as raw JSON values: the token-id prompt, the slot, the token
     * budget, and only the sampling fields the client set.
     */
    static Map<String, String> params(EngineRequest r, int slot) {
        SamplingOptions o = r.options();
        Map<String, String> json = new java.util.LinkedHashMap<>();
        json.put("prompt", Arrays.toString(r.promptTokens()).replace(" ", ""));
        json.put("id_slot", Integer.toString(slot));
        json.put("cache_prompt", "true");
        json.put("n_predict", Integer.toString(r.maxTokens()));
        putIfSet(json, "temperature", r.temperature());
        putIfSet(json, "top_p", o.topP());
        if (o.topK() != null) {
            json.put("top_k", Integer.toString(o.topK() < 0 ? 0 : o.topK()));
        }
        putIfSet(json, "min_p", o.minP());
        putIfSet(json, "presence_penalty", o.presencePenalty());
        putIfSet(json, "frequency_penalty", o.frequencyPenalty());
        putIfSet(json, "repeat_penalty", o.repetitionPenalty());
        if (r.seed() != null) {
            json.put("seed", Long.toString(r.seed() & 0xFFFF_FFFFL)); // llama.cpp's seed is 32 bits
        }
        if (!o.logitBias().isEmpty()) {
            ArrayNode bias = JSON.createArrayNode();
            o.logitBias().forEach((id, v) -> bias.addArray().add(id).add(v));
            json.put("logit_bias", bias.toString());
        }
        if (r.ignoreEos()) {
            json.put("ignore_eos", "true");
        }
        switch (o.format().kind()) {
            case JSON_OBJECT -> json.put("json_schema", "{\"type\":\"object\"}");
            case JSON_SCHEMA -> json.put("json_schema", o.format().schema());
            case FREE -> { }
        }
        return json;
    }

    private static void putIfSet(Map<String, String> json, String key, Double value) {
        if (value != null) {
            json.put(key, Double.toString(value));
        }
    }

    /** The binding's parameters holding {@code json}'s raw JSON values. */
    @SuppressWarnings("unchecked")
    private static InferenceParameters inference(Map<String, String> json) {
        InferenceParameters p = new InferenceParameters("");
        try {
            ((Map<String, String>) PARAMETERS.get(p)).putAll(json);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        return p;
    }

    /** Runs {@code a} on its slot: streams its tokens, then settles the slot. On a pump thread. */
    private void pump(Active a, Map<String, String> json) {
        FinishReason reason = null;
        Throwable error = null;
        boolean cut = false;
        try {
            LlamaIterator it = model.generate(inference(json)).iterator();
            boolean emptyPending = false;
            while (it.hasNext() && reason == null) {
                LlamaOutput out = it.next();
                boolean last = !it.hasNext();
                if (a.stopped || a.ended()) {
                    it.cancel();
                    cut = true;
                    break;
                }
                if (a.request.deadline() != null && clock.instant().isAfter(a.request.deadline())) {
                    it.cancel();
                    cut = true;
                    error = new DeadlineExceededException("request " + a.requestId() + " passed its deadline");
                    break;
                }
                byte[] bytes = out.text.getBytes(StandardCharsets.UTF_8);
                if (last) { // the final result: in a stream its text is empty, the last token came before it
                    if (emptyPending) {
                        reason = emit(a, pieces.of(new byte[0], a.generated() + 1 < a.request.maxTokens()));
                    }
                    break;
                }
                if (emptyPending) {
                    reason = emit(a, pieces.of(new byte[0], false));
                    emptyPending = false;
                    if (reason != null) {
                        it.cancel();
                        cut = true;
                        break;
                    }
                }
                if (bytes.length == 0) {
                    emptyPending = true;
                    continue;
                }
                reason = emit(a, pieces.of(bytes, false));
                if (reason != null) {
                    it.cancel();
                    cut = true;
                }
            }
            if (reason == null && error == null && !a.stopped) {
                reason = a.generated() >= a.request.maxTokens() ? FinishReason.FINISH_REASON_LENGTH
                        : FinishReason.FINISH_REASON_STOP;
            }
        } catch (RuntimeException e) {
            error = new EngineUnavailableException("llama-cpp failed on request " + a.requestId() + ": " + e.getMessage());
            cut = true;
        }
        // The slot is free (and the mirror current) before the client hears the end: a follow-up it sends at once
        // finds the slot that holds its prefix idle.
        release(a, cut || a.stopped);
        if (error != null) {
            a.finish(null, error);
        } else if (reason != null) {
            a.finish(reason, null);
        }
    }

    /** Hands one chunk's ids to the sink; the finish reason when a stop token ends the request, else null. */
    private FinishReason emit(Active a, TokenPieces.Pieces p) {
        int[] ids = p.ids();
        int n = ids.length;
        FinishReason reason = null;
        int[] stops = a.request.stopTokenIds();
        for (int i = 0; i < ids.length && reason == null; i++) {
            for (int stop : stops) {
                if (ids[i] == stop) {
                    n = i + 1;
                    reason = FinishReason.FINISH_REASON_STOP;
                    break;
                }
            }
        }
        n = Math.min(n, a.request.maxTokens() - a.generated());
        if (n <= 0) {
            return reason != null ? reason : FinishReason.FINISH_REASON_LENGTH;
        }
        int[] out = n == ids.length ? ids : Arrays.copyOf(ids, n);
        if (a.firstTokenNanos == 0) {
            a.firstTokenNanos = System.nanoTime();
        }
        for (int id : out) {
            a.ids.add(id);
        }
        if (!p.exact()) {
            a.exact = false;
            counters.inexactChunks.incrementAndGet();
        }
        counters.generated.addAndGet(out.length);
        try {
            a.sink.onTokens(out);
        } catch (RuntimeException e) { // a sink that throws is a gone client
            a.stopped = true;
        }
        return reason;
    }

    /**
     * The slot is free again: the mirror takes what it now holds (the prompt and the decoded output when every id
     * is certain and the request ran to its end; else only the prompt, which it certainly holds), and the next
     * waiting request starts.
     */
    private void release(Active a, boolean cut) {
        long now = System.nanoTime();
        synchronized (this) {
            int[] prompt = a.request.promptTokens();
            int[] held = prompt;
            if (!cut && a.exact && a.ids.size() > 1) {
                held = Arrays.copyOf(prompt, prompt.length + a.ids.size() - 1); // the last sampled token is not decoded
                for (int i = 0; i < a.ids.size() - 1; i++) {
                    held[prompt.length + i] = a.ids.get(i);
                }
            }
            publish(mirror.hold(a.slot, held));
            running[a.slot] = null;
            if (a.firstTokenNanos > 0) {
                double firstMs = (a.firstTokenNanos - a.startedNanos) / 1e6;
                int generated = a.generated();
                double decodeMs = generated > 1 ? (now - a.firstTokenNanos) / 1e6 / (generated - 1) : Double.NaN;
                if (!Double.isNaN(decodeMs)) {
                    lastStepMs = decodeMs;
                }
                int computed = prompt.length - (a.engineCount != null ? a.engineCount : a.predicted);
                timing.accept(new TimingLearner.Sample(computed, firstMs, a.alone, generated,
                        Double.isNaN(decodeMs) ? 0 : decodeMs, kvUsage()));
            }
            settleLocked();
        }
    }

    private synchronized void settle() {
        settleLocked();
    }

    /** Starts waiting requests on idle slots; completes a drain. Caller holds the lock. */
    private void settleLocked() {
        while (!waiting.isEmpty() && !closed) {
            int[] idle = idleSlots();
            if (idle.length == 0) {
                break;
            }
            Active next = waiting.poll();
            if (next.ended()) {
                continue;
            }
            dispatch(next, mirror.best(idle, next.request.promptTokens()));
        }
        if (draining && waiting.isEmpty() && Arrays.stream(running).allMatch(r -> r == null)) {
            drained.complete(null);
        }
    }

    /** Delivers the mirror's events in order. Caller holds the lock. */
    private void publish(List<KvEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        position++;
        try {
            listener.onEvents(position, List.copyOf(events));
        } catch (RuntimeException e) {
            log.warn("KV event listener failed: {}", e.toString());
        }
    }

    private double kvUsage() {
        long held = 0;
        for (int s = 0; s < running.length; s++) {
            held += mirror.length(s);
        }
        return Math.min(1, (double) held / ((long) settings.slots() * settings.contextPerSlot()));
    }

    // ------------------------------------------------------------------------------------------ the rest of the SPI

    @Override
    public synchronized ResidentBlocks residentBlocks() {
        return new ResidentBlocks(position, mirror.resident());
    }

    @Override
    public EngineCapabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public synchronized EngineLoad load() {
        int busy = 0;
        int activeBlocks = 0;
        for (int s = 0; s < running.length; s++) {
            if (running[s] != null) {
                busy++;
                activeBlocks += (running[s].request.promptTokens().length + running[s].generated()) / hasher.blockSize();
            }
        }
        long waitingTokens = waiting.stream().mapToLong(w -> w.request.promptTokens().length).sum();
        return new EngineLoad(busy, waiting.size(), waitingTokens, activeBlocks, reportedKvBlocks(), lastStepMs);
    }

    @Override
    public int blockSize() {
        return hasher.blockSize();
    }

    /**
     * Drops the caches of the idle slots. The binding has no call for it, so each idle slot is given a one-token
     * prompt ({@code kv cache rm [0, end)}: the engine drops everything the slot held) and one token to generate;
     * the mirror then holds that token alone, and the dropped blocks go out as removed events. Busy slots keep
     * theirs (a request references them).
     *
     * @return the blocks dropped
     */
    @Override
    public int clearCache() {
        List<Active> clearing = new ArrayList<>();
        int dropped = 0;
        synchronized (this) {
            if (closed) {
                return 0;
            }
            for (int s = 0; s < running.length; s++) {
                if (running[s] == null && mirror.length(s) > 0) {
                    Active c = new Active(EngineRequest.of("clear-cache-" + s, CLEARING_PROMPT, 1), NO_SINK);
                    c.slot = s;
                    running[s] = c;
                    if (engineLog.isPresent()) {
                        awaitingCount[s].add(c); // its reuse line is the engine's, not a request's
                    }
                    clearing.add(c);
                }
            }
        }
        for (Active c : clearing) {
            int s = c.slot;
            try {
                Map<String, String> json = params(c.request, s); // greedy, one token
                for (LlamaOutput ignored : model.generate(inference(json))) {
                    // run to its end: the slot now holds the one prompt token
                }
            } catch (RuntimeException e) {
                log.warn("llama-cpp: clearing slot {} failed: {}", s, e.toString());
            }
            synchronized (this) {
                dropped += mirror.blocks(s);
                publish(mirror.hold(s, CLEARING_PROMPT));
                running[s] = null;
                settleLocked();
            }
        }
        return dropped;
    }

    /** The prompt that replaces a slot's cache when it is cleared. */
    private static final int[] CLEARING_PROMPT = {0};
    private static final TokenSink NO_SINK = new TokenSink() {
        @Override
        public void onTokens(int[] tokens) {
        }

        @Override
        public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
        }

        @Override
        public void onError(Throwable error) {
        }
    };

    @Override
    public int reportedKvBlocks() {
        return (int) ((long) settings.slots() * settings.contextPerSlot() / hasher.blockSize());
    }

    @Override
    public Optional<TimingEstimate> learnedTiming() {
        return timing.estimate();
    }

    @Override
    public CompletableFuture<Void> drain() {
        synchronized (this) {
            draining = true;
            settleLocked();
        }
        return drained;
    }

    @Override
    public void close() {
        List<Active> left = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            left.addAll(waiting);
            waiting.clear();
            for (Active a : running) {
                if (a != null) {
                    left.add(a);
                }
            }
        }
        for (Active a : left) {
            a.stopped = true;
            a.finish(null, new EngineUnavailableException("the llama-cpp engine closed"));
        }
        engineLog.ifPresent(EngineLog::close);
        pumps.shutdownNow();
        // The binding's close() neither frees the model nor stops its server thread (a JVM exit does): it is left.
        drained.complete(null);
    }

    /** The text of {@code ids} as the engine detokenizes it. */
    String decode(int[] ids) {
        return model.decode(ids);
    }

    /** The engine's counters, for the worker's metrics. */
    public LlamaCppCounters counters() {
        return counters;
    }

    /** Slots and threads, for the worker's status. */
    public LlamaCppSettings settings() {
        return settings;
    }
}
