package io.flotilla.worker.kv;

import java.time.Duration;

/** What KV transfer reports to the worker's meters; the worker's metrics implement it. */
public interface TransferMeters {

    /** One handoff's missing blocks were pulled: {@code bytes} in {@code took}. */
    void kvTransferred(long bytes, Duration took);

    /** Exports a prefill worker's lease counts. */
    void bindLeases(LeaseTable leases);
}
