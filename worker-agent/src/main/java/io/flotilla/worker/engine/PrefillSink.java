package io.flotilla.worker.engine;

/**
 * Receives the outcome of one prefill-only request: exactly one call, on an engine thread, under the
 * {@link Engine} callback rules. A request cancelled before it finished gets {@code onError}.
 */
public interface PrefillSink {

    /** The KV is computed and pinned; the sink owns {@code kv.pin()} from now on. */
    void onPrefilled(PrefilledKv kv);

    void onError(Throwable error);
}
