package io.flotilla.worker.engine;

/** The request was cancelled before it produced its result (gRPC {@code CANCELLED}). */
public final class RequestCancelledException extends EngineException {

    public RequestCancelledException(String message) {
        super(message);
    }
}
