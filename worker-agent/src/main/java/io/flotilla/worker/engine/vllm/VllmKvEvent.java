package io.flotilla.worker.engine.vllm;

import java.util.Arrays;

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
     */
    record BlockStored(long[] blockHashes, Long parentBlockHash, int[] tokenIds, int blockSize, Integer loraId,
                       String medium) implements VllmKvEvent {

        @Override
        public boolean equals(Object o) {
            return o instanceof BlockStored s && Arrays.equals(blockHashes, s.blockHashes)
                    && java.util.Objects.equals(parentBlockHash, s.parentBlockHash) && Arrays.equals(tokenIds, s.tokenIds)
                    && blockSize == s.blockSize && java.util.Objects.equals(loraId, s.loraId)
                    && java.util.Objects.equals(medium, s.medium);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(blockHashes) * 31 + Arrays.hashCode(tokenIds);
        }

        @Override
        public String toString() {
            return "BlockStored[hashes=" + hexList(blockHashes) + ", parent="
                    + (parentBlockHash == null ? "none" : Long.toHexString(parentBlockHash)) + ", tokens="
                    + tokenIds.length + ", blockSize=" + blockSize + ", lora=" + loraId + ", medium=" + medium + "]";
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
