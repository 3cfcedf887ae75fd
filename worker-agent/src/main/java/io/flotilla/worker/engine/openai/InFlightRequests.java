package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Admission and drain of the requests in flight to one external engine: at most {@code max} at once
 * (the next is refused as overloaded, so the router tries another worker instead of queueing here), none
 * after {@link #drain()}, and {@link #drained()} completes once the last one finished.
 *
 * <p>It also counts admissions, so a stream can tell whether it had the engine to itself until its first
 * token ({@link #admittedSince}): such requests time the engine's prefill without queueing or batching.
 */
final class InFlightRequests {

    private final int max;
    private final Map<String, CompletionStream> streams = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private long admissions;
    private boolean draining;
    private boolean closed;

    InFlightRequests(int max) {
        this.max = max;
    }

    /** @return the number of requests in flight before this one */
    synchronized int admit(String id, CompletionStream stream) {
        refuseIfDraining();
        if (streams.size() >= max) {
            throw new EngineOverloadedException(streams.size() + " requests in flight to the engine (max " + max + ")");
        }
        if (streams.putIfAbsent(id, stream) != null) {
            throw new InvalidRequestException("request id " + id + " is already in flight");
        }
        admissions++;
        return streams.size() - 1;
    }

    synchronized void refuseIfDraining() {
        if (draining) {
            throw new EngineUnavailableException(closed ? "engine adapter closed" : "engine is draining");
        }
    }

    /** Admissions so far; {@code admittedSince(n)} is how many came after the n-th. */
    synchronized long admissions() {
        return admissions;
    }

    synchronized long admittedSince(long mark) {
        return admissions - mark;
    }

    synchronized void finished(String id) {
        streams.remove(id);
        if (draining && streams.isEmpty()) {
            drained.complete(null);
        }
    }

    synchronized CompletableFuture<Void> drain() {
        draining = true;
        if (streams.isEmpty()) {
            drained.complete(null);
        }
        return drained;
    }

    /** Stops admitting for good; returns the streams still open (the caller fails them). */
    synchronized List<CompletionStream> close() {
        if (closed) {
            return List.of();
        }
        closed = true;
        draining = true;
        return List.copyOf(streams.values());
    }

    void completeDrain() {
        drained.complete(null);
    }

    boolean isClosed() {
        synchronized (this) {
            return closed;
        }
    }

    Collection<CompletionStream> streams() {
        return streams.values();
    }
}
