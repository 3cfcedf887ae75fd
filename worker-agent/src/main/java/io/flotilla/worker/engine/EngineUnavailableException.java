package io.flotilla.worker.engine;

/** The engine is draining or closed (gRPC {@code UNAVAILABLE}); the caller should go elsewhere. */
public final class EngineUnavailableException extends EngineException {

    public EngineUnavailableException(String message) {
        super(message);
    }
}
