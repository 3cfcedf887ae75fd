package io.flotilla.gateway.tokenize;

/**
 * The block-hash chain of a prompt, as {@link ChatPromptCache} extends it from its history's: the gateway
 * adapts its block hasher to this, so that this module needs no knowledge of block identity.
 */
public interface BlockChain {

    /** Equal for two chains exactly when they hash equal tokens to equal sequence hashes (namespace, scope, block size). */
    Object identity();

    int blockSize();

    /**
     * Sequence hashes of every full block of {@code tokens}, given those of its first {@code known.length}
     * blocks (which the result starts with).
     */
    long[] seqHashes(int[] tokens, long[] known);
}
