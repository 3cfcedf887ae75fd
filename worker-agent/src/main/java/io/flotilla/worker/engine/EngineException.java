package io.flotilla.worker.engine;

/**
 * Base of the engine's own failures; each subclass maps to one gRPC status so the agent can
 * translate without inspecting messages.
 */
public abstract class EngineException extends RuntimeException {

    protected EngineException(String message) {
        super(message);
    }
}
