package io.flotilla.worker.engine;

/** The engine's waiting queue is full (gRPC {@code RESOURCE_EXHAUSTED}); another worker may take it. */
public final class EngineOverloadedException extends EngineException {

    public EngineOverloadedException(String message) {
        super(message);
    }
}
