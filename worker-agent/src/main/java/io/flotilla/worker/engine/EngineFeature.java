package io.flotilla.worker.engine;

/**
 * An optional capability of an {@link Engine}, looked up with {@link Engine#feature(Class)}. The core interface is
 * what every engine implements; everything only some engines can do is one of these, so adding an engine means
 * implementing the core and exactly the features it has, and the agent asks rather than assumes.
 *
 * <p>The features: {@link KvTransferSupport} (prefill-only runs and KV import through Flotilla's transfer agent),
 * {@link EngineKvTransfer} (the engine's own KV connector), {@link KvTierStatus} (tiers below the device),
 * {@link AdapterSupport} (LoRA adapters), {@link EmbeddingSupport} (embeddings), {@link EngineMeasurements} (capacity and timing the engine reports or the
 * worker learned from it).
 */
public interface EngineFeature {
}
