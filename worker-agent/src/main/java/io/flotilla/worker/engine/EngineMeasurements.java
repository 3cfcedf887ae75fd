package io.flotilla.worker.engine;

import java.util.Optional;

/**
 * What an engine's capacity and timing are when they come from the engine itself rather than from configuration:
 * an external server's reported KV size, llama.cpp's slots, step times learned from the engine's own requests. The
 * simulated engine does not have this feature: its capacity and timing are its configuration.
 */
public interface EngineMeasurements extends EngineFeature {

    /**
     * KV capacity in blocks of {@link Engine#blockSize()} as the engine reports it (vLLM's {@code num_gpu_blocks},
     * SGLang's {@code max_total_num_tokens}, llama.cpp's slots × context); 0 while unknown.
     */
    int reportedKvBlocks();

    /** The engine's timing as learned from its own requests once there are enough of them to trust; else empty. */
    Optional<TimingEstimate> learnedTiming();
}
