package io.flotilla.worker.engine;

import java.util.List;

/**
 * Blocks of one prompt being imported into an engine (see {@link KvTransferSupport#beginImport}).
 * Life: reserved → (fill {@link #toFetch()}) → {@link #commit()} → handed to
 * {@link KvTransferSupport#submitContinuation}; or {@link #abort()} at any point before the hand-over.
 * Thread-safe; abort after the hand-over is a no-op.
 */
public interface KvImport {

    /** seq_hash of each reserved block, in prefix order, as this engine computes it. */
    long[] seqHashes();

    /** The reserved slots that are not resident here and must be filled, in prefix order. */
    List<KvBlockRef> toFetch();

    /** Prompt tokens already resident here when the import began (a multiple of the block size). */
    int residentTokens();

    /**
     * Checks the fetched blocks' bytes as far as the engine can (the simulator compares them with
     * the block's pattern) before they are committed.
     *
     * @return index into {@link #toFetch()} of the first block that is wrong, or -1
     */
    int firstCorruptBlock();

    /** Registers the fetched blocks as resident (emitting the KV events a prefill would). */
    void commit();

    /** Frees the reserved slots and references. */
    void abort();
}
