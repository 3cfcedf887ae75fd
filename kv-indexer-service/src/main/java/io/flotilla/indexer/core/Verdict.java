package io.flotilla.indexer.core;

/** What the applier did with one input. */
public enum Verdict {
    /** The input changed the index or the worker's state (or, for a load report, was checked). */
    APPLIED,
    /** A batch was kept until a snapshot repairs the worker (it is applied later if still needed). */
    BUFFERED,
    /** A batch with {@code seq} at or below the cursor (or already buffered): dropped. */
    DUPLICATE,
    /** The input belongs to an older epoch, an expired worker, or is older than what is known: dropped. */
    STALE,
    /** Nothing to do (e.g. a digest taken at a different seq than the cursor). */
    IGNORED
}
