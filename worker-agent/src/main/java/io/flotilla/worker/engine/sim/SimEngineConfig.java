package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.worker.kvbm.TierSettings;

import java.util.Objects;

/**
 * Everything that shapes one simulated engine. Build it with {@link #builder()}; unset fields keep
 * the defaults below.
 *
 * @param blockSize        tokens per KV block (16); must equal what the worker advertises
 * @param totalBlocks      KV blocks in the pool (8192)
 * @param maxRunning       most sequences in the running batch (256)
 * @param maxBatchTokens   most tokens computed in one step, decodes and prefill chunks together (8192)
 * @param maxWaiting       most queued requests before submit fails with overload (1024)
 * @param maxContextTokens most prompt plus generated tokens of one request (131072)
 * @param kvBytesPerBlock  bytes of simulated KV payload per block, held off-heap (16384); 0 disables
 *                         payloads, for scale tests with many engines in one JVM
 * @param speedup          step durations are divided by this (1.0: real time)
 * @param vocabSize        token ids are in [0, vocabSize) (100277, cl100k_base)
 * @param eosTokenId       end-of-sequence token id (100257, cl100k_base {@code <|endoftext|>})
 * @param seed             mixed into every generated token stream; engines with equal seeds
 *                         generate equal tokens for equal requests
 * @param namespace        block identity namespace; its kvLayout also seeds the payload pattern
 * @param timing           step timing coefficients
 * @param tiers            KV tiers below the device pool (host memory, disk); {@link TierSettings#OFF}
 *                         by default; they need KV payloads ({@code kvBytesPerBlock > 0})
 * @param adapters         LoRA adapters, their slots and load time ({@link SimAdapters#NONE})
 * @param embeddingDimensions length of the engine's embeddings (256); 0: it does not embed
 */
public record SimEngineConfig(int blockSize, int totalBlocks, int maxRunning, int maxBatchTokens, int maxWaiting,
                              int maxContextTokens, int kvBytesPerBlock, double speedup, int vocabSize,
                              int eosTokenId, long seed, KvNamespace namespace, TimingModel timing,
                              TierSettings tiers, SimAdapters adapters, int embeddingDimensions) {

    public static final int DEFAULT_BLOCK_SIZE = 16;
    public static final int DEFAULT_TOTAL_BLOCKS = 8192;
    public static final int DEFAULT_MAX_RUNNING = 256;
    public static final int DEFAULT_MAX_BATCH_TOKENS = 8192;
    public static final int DEFAULT_MAX_WAITING = 1024;
    public static final int DEFAULT_MAX_CONTEXT_TOKENS = 131072;
    public static final int DEFAULT_KV_BYTES_PER_BLOCK = 16 * 1024;
    public static final int DEFAULT_VOCAB_SIZE = 100277;
    public static final int DEFAULT_EOS_TOKEN_ID = 100257;
    public static final int DEFAULT_EMBEDDING_DIMENSIONS = 256;

    public SimEngineConfig {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(timing, "timing");
        tiers = tiers == null ? TierSettings.OFF : tiers;
        if (tiers.enabled() && kvBytesPerBlock == 0) {
            throw new IllegalArgumentException("lower KV tiers move KV payloads: they need kvBytesPerBlock > 0");
        }
        adapters = adapters == null ? SimAdapters.NONE : adapters;
        positive("blockSize", blockSize);
        positive("totalBlocks", totalBlocks);
        positive("maxRunning", maxRunning);
        positive("maxBatchTokens", maxBatchTokens);
        positive("maxContextTokens", maxContextTokens);
        positive("maxWaiting", maxWaiting);
        if (kvBytesPerBlock < 0) {
            throw new IllegalArgumentException("kvBytesPerBlock must not be negative, got " + kvBytesPerBlock);
        }
        if (!(speedup > 0) || Double.isInfinite(speedup)) {
            throw new IllegalArgumentException("speedup must be positive and finite, got " + speedup);
        }
        positive("vocabSize", vocabSize);
        if (embeddingDimensions < 0) {
            throw new IllegalArgumentException("embeddingDimensions must not be negative, got " + embeddingDimensions);
        }
        if (eosTokenId < 0 || eosTokenId >= vocabSize) {
            throw new IllegalArgumentException("eosTokenId " + eosTokenId + " is outside [0, " + vocabSize + ")");
        }
    }

    public static SimEngineConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().blockSize(blockSize).totalBlocks(totalBlocks).maxRunning(maxRunning)
                .maxBatchTokens(maxBatchTokens).maxWaiting(maxWaiting).maxContextTokens(maxContextTokens)
                .kvBytesPerBlock(kvBytesPerBlock).speedup(speedup).vocabSize(vocabSize).eosTokenId(eosTokenId)
                .seed(seed).namespace(namespace).timing(timing).tiers(tiers).adapters(adapters)
                .embeddingDimensions(embeddingDimensions);
    }

    /** Tokens the whole pool can hold. */
    public long capacityTokens() {
        return (long) totalBlocks * blockSize;
    }

    private static void positive(String name, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }

    /** Mutable builder; {@code namespace} defaults to model "mock-model", cl100k_base, bf16 paged layout. */
    public static final class Builder {
        private int blockSize = DEFAULT_BLOCK_SIZE;
        private int totalBlocks = DEFAULT_TOTAL_BLOCKS;
        private int maxRunning = DEFAULT_MAX_RUNNING;
        private int maxBatchTokens = DEFAULT_MAX_BATCH_TOKENS;
        private int maxWaiting = DEFAULT_MAX_WAITING;
        private int maxContextTokens = DEFAULT_MAX_CONTEXT_TOKENS;
        private int kvBytesPerBlock = DEFAULT_KV_BYTES_PER_BLOCK;
        private double speedup = 1.0;
        private int vocabSize = DEFAULT_VOCAB_SIZE;
        private int eosTokenId = DEFAULT_EOS_TOKEN_ID;
        private long seed;
        private KvNamespace namespace;
        private TimingModel timing = TimingModel.DEFAULT;
        private TierSettings tiers = TierSettings.OFF;
        private SimAdapters adapters = SimAdapters.NONE;
        private int embeddingDimensions = DEFAULT_EMBEDDING_DIMENSIONS;

        private Builder() {
        }

        public Builder blockSize(int v) { blockSize = v; return this; }
        public Builder totalBlocks(int v) { totalBlocks = v; return this; }
        public Builder maxRunning(int v) { maxRunning = v; return this; }
        public Builder maxBatchTokens(int v) { maxBatchTokens = v; return this; }
        public Builder maxWaiting(int v) { maxWaiting = v; return this; }
        public Builder maxContextTokens(int v) { maxContextTokens = v; return this; }
        public Builder kvBytesPerBlock(int v) { kvBytesPerBlock = v; return this; }
        public Builder speedup(double v) { speedup = v; return this; }
        public Builder vocabSize(int v) { vocabSize = v; return this; }
        public Builder eosTokenId(int v) { eosTokenId = v; return this; }
        public Builder seed(long v) { seed = v; return this; }
        public Builder namespace(KvNamespace v) { namespace = v; return this; }
        public Builder timing(TimingModel v) { timing = v; return this; }
        public Builder tiers(TierSettings v) { tiers = v; return this; }
        public Builder adapters(SimAdapters v) { adapters = v; return this; }
        public Builder embeddingDimensions(int v) { embeddingDimensions = v; return this; }

        public SimEngineConfig build() {
            KvNamespace ns = namespace != null ? namespace
                    : KvNamespace.of("mock-model", "cl100k_base", KvNamespace.pagedLayout("bf16", blockSize));
            return new SimEngineConfig(blockSize, totalBlocks, maxRunning, maxBatchTokens, maxWaiting,
                    maxContextTokens, kvBytesPerBlock, speedup, vocabSize, eosTokenId, seed, ns, timing, tiers, adapters,
                    embeddingDimensions);
        }
    }
}
