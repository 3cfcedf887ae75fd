package io.flotilla.cluster.redis;

import io.flotilla.cluster.kafka.KafkaBroker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A Redis server run as a child process from Debian's {@code redis-server} (the store behind the
 * gateways' shared limits), as {@link KafkaBroker} runs Kafka: it owns its directory, listens on
 * 127.0.0.1 only, keeps nothing on disk (no RDB, no AOF: limits are soft state), and stops cleanly.
 *
 * <p>The binary is {@code $FLOTILLA_REDIS_SERVER} when set, else {@code redis-server} on the
 * {@code PATH}, else {@code /usr/bin/redis-server}. {@link #binary()} says whether there is one;
 * {@link #INSTALL_HINT} is what to tell a user who has none.
 */
public final class RedisServer implements AutoCloseable {

    public static final String INSTALL_HINT = "install Debian's redis-server (sudo apt-get install -y redis-server)"
            + " or point FLOTILLA_REDIS_SERVER at a redis-server binary";

    private static final Logger log = LoggerFactory.getLogger(RedisServer.class);

    private final Config config;
    private final int port;
    private Process process;

    /**
     * @param dir            directory the server owns (created): its configuration and log
     * @param port           port on 127.0.0.1; 0 picks a free one
     * @param exitWithParent the server stops when this JVM dies, even by SIGKILL (tests); false for a
     *                       server that outlives its launcher (bin/flotilla up)
     * @param maxMemory      Redis {@code maxmemory}, e.g. {@code 64mb}; keys with a TTL are evicted first
     * @param startTimeout   how long to wait for the first PONG
     */
    public record Config(Path dir, int port, boolean exitWithParent, String maxMemory, Duration startTimeout) {

        public static Config forTests(Path dir) {
            return new Config(dir, 0, true, "64mb", Duration.ofSeconds(20));
        }
    }

    public RedisServer(Config config) {
        this.config = config;
        this.port = config.port() == 0 ? KafkaBroker.freePort() : config.port();
    }

    /** The redis-server binary this machine has, if any. */
    public static Optional<Path> binary() {
        String override = System.getenv("FLOTILLA_REDIS_SERVER");
        if (override != null && !override.isBlank()) {
            Path p = Path.of(override.strip());
            return Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
        }
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (!dir.isBlank() && Files.isExecutable(Path.of(dir, "redis-server"))) {
                return Optional.of(Path.of(dir, "redis-server"));
            }
        }
        Path debian = Path.of("/usr/bin/redis-server");
        return Files.isExecutable(debian) ? Optional.of(debian) : Optional.empty();
    }

    /** Starts the server and waits until it answers PING. */
    public synchronized RedisServer start() {
        if (process != null) {
            return this;
        }
        Path bin = binary().orElseThrow(() -> new IllegalStateException("no redis-server binary: " + INSTALL_HINT));
        Instant begin = Instant.now();
        try {
            Files.createDirectories(config.dir());
            Path conf = writeConfig();
            List<String> cmd = new ArrayList<>();
            if (config.exitWithParent()) {
                // The shell reads this JVM's pipe until it closes (the JVM died or closed it), then stops Redis.
                cmd.addAll(List.of("/bin/sh", "-c", "\"$0\" \"$1\" & r=$!; cat >/dev/null; kill $r 2>/dev/null; wait $r",
                        bin.toString(), conf.toString()));
            } else {
                if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
                    cmd.add("/usr/bin/setsid"); // own session: a closing terminal does not take it down
                }
                cmd.addAll(List.of(bin.toString(), conf.toString()));
            }
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(config.dir().resolve("redis.out").toFile()));
            if (!config.exitWithParent()) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            }
            process = pb.start();
            awaitPong();
            log.info("Redis up at {} in {} ms (pid {}, log {})", address(), Duration.between(begin, Instant.now()).toMillis(),
                    process.pid(), logFile());
            return this;
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("cannot start redis-server: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** {@code 127.0.0.1:<port>}. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    /** {@code redis://127.0.0.1:<port>}, what the gateway's {@code flotilla.gateway.limits.redis-uri} takes. */
    public String uri() {
        return "redis://" + address();
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process == null ? -1 : process.pid();
    }

    public Path logFile() {
        return config.dir().resolve("redis.log");
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Sends one command in Redis' inline protocol and returns the first line of the answer
     * ({@code +PONG}, {@code :1}, {@code -ERR …}); for probes and tests, not a client.
     */
    public String command(String... words) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            s.setSoTimeout(2000);
            StringBuilder req = new StringBuilder("*").append(words.length).append("\r\n");
            for (String w : words) {
                byte[] b = w.getBytes(StandardCharsets.UTF_8);
                req.append('$').append(b.length).append("\r\n").append(w).append("\r\n");
            }
            OutputStream out = s.getOutputStream();
            out.write(req.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0 && c != '\n') {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        } catch (IOException e) {
            throw new UncheckedIOException("redis at " + address() + ": " + e.getMessage(), e);
        }
    }

    /** Stops the server: {@code SHUTDOWN NOSAVE}, then SIGTERM, then SIGKILL. */
    @Override
    public synchronized void close() {
        if (process == null) {
            return;
        }
        try {
            command("SHUTDOWN", "NOSAVE");
        } catch (RuntimeException ignored) {
            // not answering: the signals below stop it
        }
        try {
            process.getOutputStream().close(); // ends the watchdog shell's read
        } catch (IOException ignored) {
            // already closed
        }
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroy();
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /** Stops the server and deletes its directory. */
    public void closeAndDelete() {
        close();
        KafkaBroker.deleteRecursively(config.dir());
    }

    private void awaitPong() {
        long deadline = System.nanoTime() + config.startTimeout().toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited with code " + process.exitValue()
                        + " during start-up; see " + logFile() + " and " + config.dir().resolve("redis.out"));
            }
            try {
                if ("+PONG".equals(command("PING"))) {
                    return;
                }
            } catch (UncheckedIOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("redis-server did not answer within " + config.startTimeout() + "; see "
                        + logFile());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    private Path writeConfig() throws IOException {
        Path file = config.dir().resolve("redis.conf");
        Files.writeString(file, String.join("\n",
                "# written by Flotilla's RedisServer: the store of the gateways' shared limits (soft state)",
                "bind 127.0.0.1",
                "protected-mode yes",
                "port " + port,
                "daemonize no",
                "dir " + config.dir().toAbsolutePath(),
                "logfile " + logFile().toAbsolutePath(),
                "save \"\"",
                "appendonly no",
                "maxmemory " + config.maxMemory(),
                "maxmemory-policy volatile-ttl",
                "databases 1",
                ""));
        return file;
    }
}
