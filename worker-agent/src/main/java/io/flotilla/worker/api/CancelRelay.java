package io.flotilla.worker.api;

import io.flotilla.worker.engine.RequestHandle;

/**
 * Forwards a client's cancel to a request handle that may exist only later (a Generate whose engine
 * request is submitted after its handoff was pulled). Whichever comes second of {@link #cancel()}
 * and {@link #attach} cancels the handle; both are thread-safe.
 */
public final class CancelRelay {

    private RequestHandle handle;
    private boolean cancelled;

    synchronized void attach(RequestHandle h) {
        handle = h;
        if (cancelled) {
            h.cancel();
        }
    }

    void cancel() {
        RequestHandle h;
        synchronized (this) {
            cancelled = true;
            h = handle;
        }
        if (h != null) {
            h.cancel();
        }
    }

    synchronized boolean cancelled() {
        return cancelled;
    }
}
