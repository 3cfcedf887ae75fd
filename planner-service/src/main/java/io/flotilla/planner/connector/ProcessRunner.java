package io.flotilla.planner.connector;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Runs a command (port, faked in tests): the local connector's way to start workers. */
public interface ProcessRunner {

    /** Starts {@code command} in {@code directory}; completes with its exit status. */
    CompletableFuture<Integer> run(List<String> command, Path directory);

    /** The real thing: a child process whose output goes to the planner's own stdout/stderr. */
    static ProcessRunner system() {
        return (command, directory) -> {
            try {
                Process p = new ProcessBuilder(command).directory(directory.toFile()).inheritIO().start();
                return p.onExit().thenApply(Process::exitValue);
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
        };
    }
}
