package io.flotilla.planner.connector;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** Asks one worker to drain ({@code WorkerService.Drain}); port, faked in tests. */
public interface DrainClient extends AutoCloseable {

    /**
     * Completes with the requests still in flight when the worker finished draining (it then publishes
     * STOPPED), or exceptionally when the worker could not be asked.
     */
    CompletableFuture<Integer> drain(String endpoint, Duration deadline);

    @Override
    default void close() {
    }
}
