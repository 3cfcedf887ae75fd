package io.flotilla.worker.engine.llamacpp;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * llama.cpp's own account of each request, read from what it prints. The Java binding returns no cache counts, but
 * the engine's server prints, per slot and task, {@code kv cache rm [N, end)} when it starts a prompt: N prompt
 * tokens were taken from the slot's cache and the rest is evaluated. The engine prints to the process's standard
 * output; when that is a regular file (the local cluster's launcher writes each worker's output to one), this reader
 * follows it from the end and hands each count to {@link Listener} — the worker checks its cache mirror against it.
 * Where the output is a terminal or a pipe (a container's log stream), {@link #open} answers empty and the worker
 * reports its mirror's prediction unchecked.
 */
final class EngineLog implements AutoCloseable {

    /** Receives the engine's reuse count for the prompt slot {@code slot} just started. */
    interface Listener {
        void reused(int slot, int tokens);
    }

    private static final Logger log = LoggerFactory.getLogger(EngineLog.class);
    static final Pattern KV_CACHE_RM = Pattern.compile("id +(\\d+) \\| task (\\d+) \\| kv cache rm \\[(-?\\d+), end\\)");
    private static final Path STDOUT = Path.of("/proc/self/fd/1");

    private final Thread reader;
    private volatile boolean closed;

    private EngineLog(Path file, Listener listener) throws IOException {
        RandomAccessFile in = new RandomAccessFile(file.toFile(), "r");
        in.seek(in.length());
        reader = new Thread(() -> follow(in, listener), "llama-cpp-log");
        reader.setDaemon(true);
        reader.start();
    }

    /** Follows this process's standard output when it is a regular file; empty when it is not. */
    static Optional<EngineLog> open(Listener listener) {
        return open(STDOUT, listener);
    }

    static Optional<EngineLog> open(Path file, Listener listener) {
        try {
            if (!Files.isRegularFile(file)) {
                return Optional.empty();
            }
            return Optional.of(new EngineLog(file.toRealPath(), listener));
        } catch (IOException | UnsupportedOperationException e) {
            log.warn("cannot follow the engine's output {}: {}", file, e.toString());
            return Optional.empty();
        }
    }

    /** Parses one line; true when it was a reuse count. */
    static boolean parse(String line, Listener listener) {
        Matcher m = KV_CACHE_RM.matcher(line);
        if (!m.find()) {
            return false;
        }
        listener.reused(Integer.parseInt(m.group(1)), Math.max(0, Integer.parseInt(m.group(3))));
        return true;
    }

    private void follow(RandomAccessFile in, Listener listener) {
        StringBuilder line = new StringBuilder();
        byte[] buffer = new byte[64 * 1024];
        try (in) {
            while (!closed) {
                int n = in.read(buffer);
                if (n <= 0) {
                    if (in.getFilePointer() > in.length()) {
                        in.seek(in.length()); // the file was truncated
                    }
                    Thread.sleep(2);
                    continue;
                }
                for (int i = 0; i < n; i++) {
                    if (buffer[i] == '\n') {
                        if (line.indexOf("kv cache rm") >= 0) {
                            parse(line.toString(), listener);
                        }
                        line.setLength(0);
                    } else if (line.length() < 4096) {
                        line.append((char) (buffer[i] & 0xFF));
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            log.warn("stopped following the engine's output: {}", e.toString());
        }
    }

    @Override
    public void close() {
        closed = true;
        reader.interrupt();
    }
}
