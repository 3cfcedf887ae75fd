package io.flotilla.worker.engine;

/**
 * An engine that serves LoRA adapters. A request whose {@link EngineRequest#scope()} names an adapter the engine
 * cannot serve is an {@link InvalidRequestException}; changes of the loaded set go to
 * {@link EngineListeners#adaptersChanged()}.
 */
public interface AdapterSupport extends EngineFeature {

    /** The adapters now loaded and available, with their load counters; a fresh snapshot per call. */
    AdapterStatus adapterStatus();
}
