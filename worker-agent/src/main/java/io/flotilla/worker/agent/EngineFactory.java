package io.flotilla.worker.agent;

import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.identity.WorkerIdentity;

/** Creates the engine a worker runs in front of; the agent does not know which kind it is. */
@FunctionalInterface
public interface EngineFactory {

    /** A started engine for the worker, calling {@code listeners} from its first KV event on. */
    Engine create(WorkerIdentity identity, int index, EngineListeners listeners);
}
