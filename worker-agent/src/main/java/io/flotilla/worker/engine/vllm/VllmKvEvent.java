package io.flotilla.worker.engine.vllm;

import java.util.Arrays;
import java.util.List;

/**
 * One KV cache event as vLLM publishes it ({@code vllm.distributed.kv_events}), decoded but not yet
 * translated. Block hashes are the engine's own: opaque 64-bit values (a digest's last 8 bytes,
 * read big-endian, when the engine sends raw digests), meaningful only within one engine process.
 */
public sealed interface VllmKvEvent {

    /** Storage medium vLLM names when a block lives on the GPU (also the meaning of an absent medium). */
    String MEDIUM_GPU = "GPU";

    /**
     * Blocks became cached, in prefix order.
     *
     * @param blockHashes     engine hashes of the stored blocks
     * @param parentBlockHash engine hash of the block before the first one, or null for a root
     * @param tokenIds        the tokens of all stored blocks, concatenated (blockSize per block)
     * @param blockSize       tokens per block as the engine counts them
     * @param loraId          LoRA adapter id, or null for the base model
     * @param medium          where the blocks live ("GPU", "CPU", ...), or null for the GPU
     * @param loraName        LoRA adapter name (newer vLLM), or null for the base model or an engine that
     *                        does not send it
     * @param extraKeys       the extra keys vLLM hashed each block with (adapter name, the request's
     *                        {@code cache_salt} on its first block, multimodal ids), one entry per block; null
     *                        when the engine does not send them (vLLM before {@code extra_keys} joined the event)
     */
    record BlockStored(long[] blockHashes, Long parentBlockHash, int[] tokenIds, int blockSize, Integer loraId,
                       String medium, String loraName, List<ExtraKeys> extraKeys) implements VllmKvEvent {

        /** An event of an engine that sends neither adapter names nor extra keys. */
        public BlockStored(long[] blockHashes, Long parentBlockHash, int[] tokenIds, int blockSize, Integer loraId,
                           String medium) {
            this(blockHashes, parentBlockHash, tokenIds, blockSize, loraId, medium, null, null);
        }

        /** The extra keys of block {@code i} of the event ({@link ExtraKeys#NONE} when it has none). */
        public ExtraKeys keysOf(int i) {
            return extraKeys == null || i >= extraKeys.size() ? ExtraKeys.NONE : extraKeys.get(i);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof BlockStored s && Arrays.equals(blockHashes, s.blockHashes)
                    && java.util.Objects.equals(parentBlockHash, s.parentBlockHash) && Arrays.equals(tokenIds, s.tokenIds)
                    && blockSize == s.blockSize && java.util.Objects.equals(loraId, s.loraId)
                    && java.util.Objects.equals(medium, s.medium) && java.util.Objects.equals(loraName, s.loraName)
                    && java.util.Objects.equals(extraKeys, s.extraKeys);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(blockHashes) * 31 + Arrays.hashCode(tokenIds);
        }

        @Override
        public String toString() {
            return "BlockStored[hashes=" + hexList(blockHashes) + ", parent="
                    + (parentBlockHash == null ? "none" : Long.toHexString(parentBlockHash)) + ", tokens="
                    + tokenIds.length + ", blockSize=" + blockSize + ", lora=" + loraId + ", medium=" + medium
                    + (loraName == null ? "" : ", loraName=" + loraName) + (extraKeys == null ? "" : ", extraKeys=" + extraKeys)
                    + "]";
        }
    }

    /**
     * One block's extra keys as Flotilla reads them: its string keys in order (an adapter name, a cache
     * salt) and whether it also had keys of other types (multimodal item ids, prompt-embedding digests),
     * whose effect on the engine's hash Flotilla cannot reproduce from token ids.
     */
    record ExtraKeys(List<String> strings, boolean opaque) {
        public static final ExtraKeys NONE = new ExtraKeys(List.of(), false);

        public ExtraKeys {
            strings = List.copyOf(strings);
        }
    }

    /** Blocks left the cache. */
    record BlockRemoved(long[] blockHashes, String medium) implements VllmKvEvent {

        @Override
        public boolean equals(Object o) {
            return o instanceof BlockRemoved r && Arrays.equals(blockHashes, r.blockHashes)
                    && java.util.Objects.equals(medium, r.medium);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(blockHashes);
        }

        @Override
        public String toString() {
            return "BlockRemoved[hashes=" + hexList(blockHashes) + ", medium=" + medium + "]";
        }
    }

    /** The engine dropped every cached block (prefix cache reset). */
    record AllBlocksCleared() implements VllmKvEvent {
    }

    /** An event type this decoder does not know (a newer engine); skipped and counted. */
    record Unknown(String type) implements VllmKvEvent {
    }

    private static String hexList(long[] hashes) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < hashes.length; i++) {
            b.append(i == 0 ? "" : ",").append(Long.toHexString(hashes[i]));
        }
        return b.append(']').toString();
    }
}
