package io.flotilla.router.core;

/** Where a snapshot's per-worker overlap answer came from. */
public enum OverlapSource {
    /** The kv-indexer answered {@code FindMatches}. */
    INDEXER,
    /** The indexer was slow or down; the router's own {@link ApproxIndex} answered. */
    APPROX,
    /** No overlap answer at all: the policy prices every worker without cache credit. */
    NONE
}
