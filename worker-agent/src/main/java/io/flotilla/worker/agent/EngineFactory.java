package io.flotilla.worker.agent;

import io.flotilla.worker.engine.Engine;

/** Creates the engine a worker runs in front of; the agent does not know which kind it is. */
@FunctionalInterface
public interface EngineFactory {

    /** A started engine for the worker; its KV event listener is not set yet. */
    Engine create(WorkerIdentity identity, int index);
}
