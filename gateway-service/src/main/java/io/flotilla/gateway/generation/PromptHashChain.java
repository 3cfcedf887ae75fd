package io.flotilla.gateway.generation;

import io.flotilla.gateway.tokenize.BlockChain;
import io.flotilla.protocol.hash.ScopedHasher;

/** A request's block hasher as the chat-prompt cache extends a history's hash chain with it. */
public record PromptHashChain(ScopedHasher hasher) implements BlockChain {

    @Override
    public Object identity() {
        return hasher.identity();
    }

    @Override
    public int blockSize() {
        return hasher.blockSize();
    }

    @Override
    public long[] seqHashes(int[] tokens, long[] known) {
        return hasher.seqHashes(tokens, known);
    }
}
