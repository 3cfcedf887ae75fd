package io.flotilla.worker.engine;

/** A request's deadline passed before it finished (gRPC {@code DEADLINE_EXCEEDED}). */
public final class DeadlineExceededException extends EngineException {

    public DeadlineExceededException(String message) {
        super(message);
    }
}
