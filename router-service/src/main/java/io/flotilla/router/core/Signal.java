package io.flotilla.router.core;

/** An input a scorer needs; the shell fetches only the signals the configured policy requires. */
public enum Signal {
    /** Per-worker prefix overlap for the request (indexer or {@link ApproxIndex}). */
    KV_OVERLAP,
    /** Load reports and this router's {@link ActiveSequences} bookings. */
    LOAD,
    /** Advertised engine timing coefficients (without them costs are priced in blocks). */
    TIMING
}
