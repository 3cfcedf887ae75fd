package io.flotilla.worker.engine;

/** The request can never run on this engine as given (gRPC {@code INVALID_ARGUMENT}). */
public final class InvalidRequestException extends EngineException {

    public InvalidRequestException(String message) {
        super(message);
    }
}
