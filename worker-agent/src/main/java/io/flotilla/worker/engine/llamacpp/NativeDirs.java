package io.flotilla.worker.engine.llamacpp;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Private folders the binding unpacks its native library into ({@code flotilla-jllama-<pid>} under the temp
 * directory): private because the binding deletes the {@code llama*} entries of its folder when it loads, which
 * would pull the library from under another worker sharing the folder. Each worker removes its own at exit and, at
 * start, those of workers that are gone (a SIGKILLed worker leaves one, 5 MB each).
 */
public final class NativeDirs {

    private static final Logger log = LoggerFactory.getLogger(NativeDirs.class);
    static final String PREFIX = "flotilla-jllama-";

    private NativeDirs() {
    }

    /** This process's folder under {@code tmp}, removed at exit; stale ones of dead processes are removed now. */
    public static Path ownPrivate(Path tmp) {
        removeStale(tmp);
        Path own = tmp.resolve(PREFIX + ProcessHandle.current().pid());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(own), "jllama-dir-cleanup"));
        return own;
    }

    /** Removes the folders under {@code tmp} whose process no longer runs; how many. */
    static int removeStale(Path tmp) {
        int removed = 0;
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, PREFIX + "*")) {
            for (Path dir : dirs) {
                String pid = dir.getFileName().toString().substring(PREFIX.length());
                if (pid.matches("\\d+") && ProcessHandle.of(Long.parseLong(pid)).isEmpty()) {
                    delete(dir);
                    removed++;
                }
            }
        } catch (IOException | RuntimeException e) {
            log.debug("cannot list {}: {}", tmp, e.toString());
        }
        return removed;
    }

    /** Deletes {@code dir} as far as it can; another worker may be deleting the same stale folder at once. */
    static void delete(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    log.debug("cannot delete {}: {}", p, e.toString());
                }
            });
        } catch (IOException | java.io.UncheckedIOException e) {
            log.debug("cannot walk {}: {}", dir, e.toString());
        }
    }
}
