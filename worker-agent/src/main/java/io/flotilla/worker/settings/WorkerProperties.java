package io.flotilla.worker.settings;

import io.flotilla.protocol.Ports;
import io.flotilla.worker.engine.sim.SimEngineConfig;
import io.flotilla.worker.kvbm.TierSettings;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Worker agent settings. Worker n has id {@code worker-n}, gRPC port 7100+n and transfer port 7300+n
 * unless {@code id}, {@code grpc-port} or {@code transfer-port} say otherwise. With {@code instances > 1}
 * the JVM simulates workers n, n+1, … each with its own id, ports and epoch.
 *
 * @param index          number n of the (first) worker in this JVM
 * @param id             worker id; default {@code worker-<index>}
 * @param grpcPort       WorkerService port; default 7100 + index; 0: each worker binds a free port and advertises it
 * @param transferPort   KV transfer agent port; default 7300 + index
 * @param advertisedHost host name other services use to reach this worker
 * @param role           aggregated, prefill or decode
 * @param model          model served
 * @param engine         engine adapter: sim (built-in simulated engine), openai-http (vLLM's OpenAI-compatible
 *                       server) or sglang (SGLang's native API)
 * @param instances      simulated workers in this JVM
 * @param leaseMs        membership lease; a worker not heard from for this long leaves the worker set
 * @param heartbeatMs    interval of WorkerStatus heartbeats on flotilla.workers
 * @param loadReportMs   how often the load is sampled for WorkerLoad reports on flotilla.worker-load: a changed load
 *                       is sent at the next sample, an unchanged one again after {@code heartbeatMs}
 * @param reportLingerMs how long heartbeats and load reports wait in the producer for others to share a request
 *                       (Kafka's {@code linger.ms} for them; KV events keep the shorter default)
 * @param eventBuffer    KV event batches buffered while Kafka is slow or down; beyond it batches are
 *                       dropped and the gap is repaired by the indexer from a snapshot
 * @param tokenizerId    tokenizer identity that goes into the block-hash namespace
 * @param tokenizerSource where a gateway can load that tokenizer, registered with the worker: a HuggingFace
 *                       repo id or a model directory; default {@code builtin:cl100k_base} for cl100k_base, else
 *                       the tokenizer id (a HuggingFace repo id by convention)
 * @param dtype          KV cache dtype, part of the advertised kv_layout
 * @param sim            simulated engine settings
 * @param transfer       KV transfer between workers (disaggregated prefill/decode)
 * @param http           external engine server settings, used when {@code engine = openai-http}
 * @param kvbm           KV tiers below the simulated engine's device pool (host memory, disk)
 * @param lora           LoRA adapters the engine serves
 */
@Validated
@ConfigurationProperties("flotilla.worker")
public record WorkerProperties(
        @DefaultValue("0") @Min(0) int index,
        String id,
        @Min(0) @Max(65535) Integer grpcPort,
        @Min(0) @Max(65535) Integer transferPort,
        @DefaultValue("localhost") @NotBlank String advertisedHost,
        @DefaultValue("aggregated") @Pattern(regexp = "aggregated|prefill|decode") String role,
        @DefaultValue("flotilla-sim") @NotBlank String model,
        @DefaultValue("sim") @Pattern(regexp = "sim|openai-http|sglang|llama-cpp") String engine,
        @DefaultValue("1") @Min(1) @Max(512) int instances,
        @DefaultValue("3000") @Min(100) int leaseMs,
        @DefaultValue("1000") @Min(50) int heartbeatMs,
        @DefaultValue("250") @Min(10) int loadReportMs,
        @DefaultValue("50") @Min(0) @Max(1000) int reportLingerMs,
        @DefaultValue("10000") @Min(1) int eventBuffer,
        @DefaultValue("cl100k_base") @NotBlank String tokenizerId,
        String tokenizerSource,
        @DefaultValue("bf16") @NotBlank String dtype,
        @DefaultValue Sim sim,
        @DefaultValue @Valid Transfer transfer,
        @DefaultValue @Valid Http http,
        @DefaultValue @Valid Kvbm kvbm,
        @DefaultValue @Valid Lora lora,
        @DefaultValue @Valid Llama llama) {

    /**
     * Simulated engine settings (ARCHITECTURE "Simulated engine").
     *
     * @param blockSize      tokens per KV block
     * @param totalBlocks    KV blocks per worker
     * @param maxRunning     most sequences in the running batch
     * @param maxBatchTokens token budget per step
     * @param maxWaiting     waiting-queue bound; a full queue answers RESOURCE_EXHAUSTED
     * @param maxContext     longest prompt plus output, in tokens
     * @param kvBytesPerBlock bytes of simulated KV per block (off-heap); 0 disables payloads
     * @param speedup        simulated time runs this many times faster than the timing model
     * @param profile        optional timing-profile file: properties overriding the coefficients, or a measured
     *                       performance profile (the JSON of {@code bin/flotilla profile}) the coefficients are fitted to
     * @param seed           seed of the engine's randomness
     * @param vocabSize      token ids are in [0, vocabSize): prompts with other ids are refused and generated
     *                       ids are drawn from it (100277, cl100k_base; a model directory's tokenizer needs its own)
     * @param eosTokenId     the token that ends a generation (100257, cl100k_base {@code <|endoftext|>})
     * @param script         scripted mode: a JSON file of rules that give chosen prompts fixed replies
     *                       (tool calls, reasoning, …; see {@code SimScript}); unset: every prompt is sampled
     * @param embeddingDimensions length of the engine's deterministic embeddings (256); 0: the worker does not embed
     */
    public record Sim(
            @DefaultValue("" + SimEngineConfig.DEFAULT_BLOCK_SIZE) @Min(1) @Max(1024) int blockSize,
            @DefaultValue("" + SimEngineConfig.DEFAULT_TOTAL_BLOCKS) @Min(1) int totalBlocks,
            @DefaultValue("" + SimEngineConfig.DEFAULT_MAX_RUNNING) @Min(1) int maxRunning,
            @DefaultValue("" + SimEngineConfig.DEFAULT_MAX_BATCH_TOKENS) @Min(1) int maxBatchTokens,
            @DefaultValue("" + SimEngineConfig.DEFAULT_MAX_WAITING) @Min(1) int maxWaiting,
            @DefaultValue("" + SimEngineConfig.DEFAULT_MAX_CONTEXT_TOKENS) @Min(1) int maxContext,
            @DefaultValue("" + SimEngineConfig.DEFAULT_KV_BYTES_PER_BLOCK) @Min(0) int kvBytesPerBlock,
            @DefaultValue("1.0") double speedup,
            String profile,
            @DefaultValue("0") long seed,
            @DefaultValue("" + SimEngineConfig.DEFAULT_VOCAB_SIZE) @Min(1) int vocabSize,
            @DefaultValue("" + SimEngineConfig.DEFAULT_EOS_TOKEN_ID) @Min(0) int eosTokenId,
            Path script,
            @DefaultValue("" + SimEngineConfig.DEFAULT_EMBEDDING_DIMENSIONS) @Min(0) @Max(65536) int embeddingDimensions) {

        public Sim {
            if (eosTokenId >= vocabSize) {
                throw new IllegalArgumentException("flotilla.worker.sim.eos-token-id " + eosTokenId
                        + " is outside the vocabulary [0, " + vocabSize + ") of flotilla.worker.sim.vocab-size");
            }
        }

        /**
         * The simulated engine's configuration from these settings; the worker adds what is its own
         * (namespace, timing, tiers). Unset keys bind to {@code SimEngineConfig}'s defaults, which the
         * {@code @DefaultValue}s above name, so the two cannot disagree.
         */
        public SimEngineConfig.Builder engineConfig() {
            return SimEngineConfig.builder()
                    .blockSize(blockSize)
                    .totalBlocks(totalBlocks)
                    .maxRunning(maxRunning)
                    .maxBatchTokens(maxBatchTokens)
                    .maxWaiting(maxWaiting)
                    .maxContextTokens(maxContext)
                    .kvBytesPerBlock(kvBytesPerBlock)
                    .speedup(speedup)
                    .seed(seed)
                    .vocabSize(vocabSize)
                    .eosTokenId(eosTokenId)
                    .embeddingDimensions(embeddingDimensions);
        }
    }

    /**
     * KV transfer between workers (ARCHITECTURE "Disaggregated (prefill first)"). A worker with
     * transfer on runs one transfer agent on its transfer port, serves {@code Prefill} and pulls the
     * KV of handoffs it receives; with transfer off it refuses {@code Prefill} and prefills every
     * handoff locally.
     *
     * @param enabled       on or off; unset: on for the prefill and decode roles, off for aggregated
     * @param engine        transfer engine: auto (native library if it loads, else pure Java), native, java
     * @param backends      backends to enable, e.g. {@code tcp,shm}; empty: the engine's default
     * @param listenHost    address the agent binds and advertises; default: the advertised host
     * @param leaseTtlMs    how long a prefill worker keeps a handoff's blocks pinned when nobody
     *                      releases them
     * @param pullTimeoutMs longest a decode worker waits for a handoff's blocks before it prefills locally
     * @param pullThreads   threads pulling handoffs (each waits on one transfer at a time)
     * @param ioTimeoutMs   the agent's send/receive timeout on its connections
     */
    public record Transfer(
            Boolean enabled,
            @DefaultValue("auto") @Pattern(regexp = "auto|native|java") String engine,
            @DefaultValue("") @Pattern(regexp = "((tcp|shm|ucx)(,(tcp|shm|ucx))*)?") String backends,
            String listenHost,
            @DefaultValue("30000") @Min(100) int leaseTtlMs,
            @DefaultValue("10000") @Min(10) int pullTimeoutMs,
            @DefaultValue("2") @Min(1) @Max(64) int pullThreads,
            @DefaultValue("30000") @Min(100) int ioTimeoutMs) {

        /** Whether a worker of {@code role} runs a transfer agent. */
        public boolean enabledFor(String role) {
            return enabled != null ? enabled : !"aggregated".equals(role);
        }
    }

    /**
     * An external engine server (vLLM or SGLang) the worker fronts when {@code engine = openai-http}
     * (see {@code worker-agent/ENGINES.md}). One worker per engine server: {@code instances} must be 1.
     * The block size Flotilla hashes with stays {@code sim.block-size}; it must equal the engine's
     * {@code --block-size} (a mismatch is logged loudly at start-up and every KV event is rejected).
     *
     * @param url              base URL of the engine's OpenAI-compatible HTTP server
     * @param servedModel      model name the engine serves (the {@code model} field sent to it);
     *                         default: {@code flotilla.worker.model}
     * @param kvEvents         the engine's ZMQ KV event PUB endpoint, e.g. {@code tcp://localhost:5557};
     *                         empty: no KV events (the worker reports an empty cache)
     * @param kvEventsReplay   the engine's ZMQ replay endpoint, e.g. {@code tcp://localhost:5558}; empty:
     *                         every event gap resyncs the worker's view (AllBlocksCleared)
     * @param kvEventsTopic    KV event topic to subscribe to (vLLM's {@code topic}); empty: all topics
     * @param metricsPath      path of the engine's Prometheus endpoint
     * @param healthPath       path of the engine's health endpoint (200 = healthy)
     * @param clearCachePath   path to POST to drop the engine's prefix cache; default vLLM's
     *                         {@code /reset_prefix_cache}, SGLang's {@code /flush_cache}
     * @param scrapeIntervalMs interval of health and metrics scrapes
     * @param unhealthyAfter   consecutive failed scrapes after which the engine counts as unhealthy
     * @param connectTimeoutMs TCP connect timeout to the engine
     * @param requestTimeoutMs longest silence on a response stream before the request fails
     * @param replayTimeoutMs  how long a KV event replay may take before the gap counts as lost
     * @param maxInFlight      requests in flight to the engine before the worker answers RESOURCE_EXHAUSTED
     * @param returnTokenIds   send {@code "return_token_ids": true} (vLLM 0.10 and later return the
     *                         generated ids with it; turn off for servers that reject unknown fields)
     * @param handoffTtlMs     how long a P/D handoff from this worker (prefill role) stays usable; keep it
     *                         below the engine's own timeout for KV nobody reads (vLLM
     *                         {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT}, 480 s by default)
     * @param kvCapacityBlocks the engine's KV capacity in blocks of {@code sim.block-size}; 0 (default): what
     *                         the engine reports (vLLM {@code num_gpu_blocks}, SGLang {@code max_total_num_tokens}
     *                         / block size). A positive value wins over the engine's
     * @param serverInfoPath   SGLang: path of the server information ({@code max_total_num_tokens}, {@code page_size})
     * @param embeddingDimensions vLLM: the length of the embeddings of the engine's pooling model, whose
     *                         {@code /v1/embeddings} the worker then passes embedding requests to; 0 (default): the
     *                         engine does not embed (a generative model)
     * @param embeddingTruncatable vLLM: the pooling model is a Matryoshka model (the engine honours {@code dimensions})
     */
    public record Http(
            @DefaultValue("http://localhost:8000") @NotBlank String url,
            String servedModel,
            @DefaultValue("") String kvEvents,
            @DefaultValue("") String kvEventsReplay,
            @DefaultValue("") String kvEventsTopic,
            @DefaultValue("/metrics") @NotBlank String metricsPath,
            @DefaultValue("/health") @NotBlank String healthPath,
            String clearCachePath,
            @DefaultValue("250") @Min(10) int scrapeIntervalMs,
            @DefaultValue("4") @Min(1) int unhealthyAfter,
            @DefaultValue("2000") @Min(1) int connectTimeoutMs,
            @DefaultValue("60000") @Min(1) int requestTimeoutMs,
            @DefaultValue("1000") @Min(1) int replayTimeoutMs,
            @DefaultValue("1024") @Min(1) int maxInFlight,
            @DefaultValue("true") boolean returnTokenIds,
            @DefaultValue("120000") @Min(100) int handoffTtlMs,
            @DefaultValue("0") @Min(0) int kvCapacityBlocks,
            @DefaultValue("/get_server_info") @NotBlank String serverInfoPath,
            @DefaultValue("0") @Min(0) int embeddingDimensions,
            @DefaultValue("false") boolean embeddingTruncatable) {
    }

    /**
     * LoRA adapters (docs/tenancy.md, "LoRA adapters"). The simulated engine serves {@code adapters} in
     * {@code max-loaded} slots, each load taking {@code load-ms} of simulated time; a vLLM worker serves what
     * the engine lists in {@code /v1/models} plus the adapters of {@code paths}, which it loads on demand
     * ({@code /v1/load_lora_adapter}) and unloads, least recently used first, to keep at most {@code max-loaded}.
     * SGLang workers serve none.
     *
     * @param adapters  simulated engine: the adapters it serves
     * @param paths     vLLM: adapter name → {@code lora_path} the engine loads it from
     * @param maxLoaded adapters loaded at once (simulated slots; vLLM: keep at most its {@code --max-cpu-loras})
     * @param loadMs    simulated engine: one load's time (divided by {@code sim.speedup}); vLLM: the load time
     *                  advertised until loads were measured
     */
    public record Lora(
            @DefaultValue List<String> adapters,
            Map<String, String> paths,
            @DefaultValue("4") @Min(1) int maxLoaded,
            @DefaultValue("500") @jakarta.validation.constraints.DecimalMin("0") double loadMs) {

        public Lora {
            adapters = adapters == null ? List.of() : List.copyOf(adapters);
            paths = paths == null ? Map.of() : Map.copyOf(paths);
        }
    }

    /**
     * The in-process llama.cpp engine ({@code engine = llama-cpp}, worker-agent/ENGINES.md): a GGUF model run by
     * java-llama.cpp on this machine's CPUs.
     *
     * @param gguf           the model file (required with {@code engine = llama-cpp})
     * @param slots          parallel sequences, each with its own prompt cache, decoded by continuous batching
     * @param threads        CPU threads of the engine
     * @param contextPerSlot tokens one slot holds, prompt plus output (at most the model's trained context)
     * @param maxWaiting     requests queued for a slot before the worker answers RESOURCE_EXHAUSTED
     * @param nativeDir      folder the binding unpacks its native library into (empty: a private one under the
     *                       system temp directory)
     */
    public record Llama(
            String gguf,
            @DefaultValue("2") @Min(1) @Max(64) int slots,
            @DefaultValue("1") @Min(1) @Max(256) int threads,
            @DefaultValue("4096") @Min(16) int contextPerSlot,
            @DefaultValue("64") @Min(0) int maxWaiting,
            String nativeDir) {
    }

    /** The path that clears the engine's prefix cache: the configured one, else the engine's own. */
    public String clearCachePath() {
        String configured = http.clearCachePath();
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        return "sglang".equals(engine) ? "/flush_cache" : "/reset_prefix_cache";
    }

    /** Where the tokenizer of this worker's namespace can be loaded (see {@code tokenizer-source}). */
    public String tokenizerSourceOrDefault() {
        if (tokenizerSource != null && !tokenizerSource.isBlank()) {
            return tokenizerSource;
        }
        return "cl100k_base".equals(tokenizerId) ? "builtin:cl100k_base" : tokenizerId;
    }

    /** The engine as the membership record names it: sim, vllm or sglang. */
    public String engineKind() {
        return switch (engine) {
            case "openai-http" -> "vllm";
            default -> engine;
        };
    }

    /**
     * The KV block manager's tiers below the simulated engine's device pool (ARCHITECTURE "KV tiers"):
     * evicted device blocks are kept in host memory, host-memory victims on disk, and a request whose
     * prefix is there onboards it instead of recomputing it when that is cheaper. Needs
     * {@code sim.kv-bytes-per-block > 0}. Sizes take bytes or Spring data sizes ({@code 2GB} = 2 GiB).
     *
     * @param hostBytes            host-memory tier per worker, off-heap (0: no tiers). The JVM's
     *                             {@code -XX:MaxDirectMemorySize} must hold it plus the device pool
     * @param diskBytes            disk tier per worker (0: none); needs a host tier
     * @param diskDir              directory of the disk tier; each worker uses {@code <disk-dir>/<worker id>}
     * @param hostBytesPerSecond   host→device link bandwidth onboarding is charged at (PCIe 4.0 x16)
     * @param diskBytesPerSecond   disk→device bandwidth onboarding is charged at (a PCIe 4.0 NVMe drive)
     * @param modeledBytesPerBlock bytes one block stands for when onboarding is charged and priced
     *                             (0: the simulated payload, {@code sim.kv-bytes-per-block})
     */
    public record Kvbm(
            @DefaultValue("0") DataSize hostBytes,
            @DefaultValue("0") DataSize diskBytes,
            @DefaultValue(".flotilla/kvbm") String diskDir,
            @DefaultValue("25e9") double hostBytesPerSecond,
            @DefaultValue("3e9") double diskBytesPerSecond,
            @DefaultValue("0") DataSize modeledBytesPerBlock) {

        public Kvbm {
            if (hostBytes.isNegative() || diskBytes.isNegative() || modeledBytesPerBlock.isNegative()) {
                throw new IllegalArgumentException("flotilla.worker.kvbm sizes must not be negative");
            }
            if (!(hostBytesPerSecond > 0) || !(diskBytesPerSecond > 0)) {
                throw new IllegalArgumentException("flotilla.worker.kvbm link bandwidths must be positive");
            }
            if (diskBytes.toBytes() > 0 && hostBytes.toBytes() == 0) {
                throw new IllegalArgumentException("flotilla.worker.kvbm.disk-bytes needs a host tier: the disk tier "
                        + "is filled from host memory (set flotilla.worker.kvbm.host-bytes)");
            }
        }

        /** The tiers of worker {@code workerId}: its own directory under {@code diskDir}. */
        public TierSettings settings(String workerId) {
            return new TierSettings(hostBytes.toBytes(), Path.of(diskDir).resolve(workerId), diskBytes.toBytes(),
                    hostBytesPerSecond, diskBytesPerSecond, modeledBytesPerBlock.toBytes());
        }
    }

    /** The KV layout string workers advertise and hash with, e.g. {@code bf16/bs16/paged}. */
    public String kvLayout() {
        return dtype + "/bs" + sim.blockSize() + "/paged";
    }

    /** Id of the i-th worker in this JVM (i = 0 … instances-1). */
    public String workerId(int i) {
        if (id != null && !id.isBlank()) {
            return instances == 1 ? id : id + "-" + i;
        }
        return Ports.workerId(index + i);
    }

    /** The i-th worker's gRPC port; 0 (every worker binds a free port and advertises it) when grpc-port is 0. */
    public int grpcPort(int i) {
        return grpcPort != null && grpcPort == 0 ? 0 : (grpcPort != null ? grpcPort : Ports.workerGrpc(index)) + i;
    }

    /** The i-th worker's transfer port; 0 when transfer-port is 0 (refused where the transfer agent runs). */
    public int transferPort(int i) {
        return transferPort != null && transferPort == 0 ? 0
                : (transferPort != null ? transferPort : Ports.workerTransfer(index)) + i;
    }
}
