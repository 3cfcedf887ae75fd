package io.flotilla.cluster.kafka;

import io.flotilla.protocol.kafka.TopicAdmin;
import io.flotilla.protocol.kafka.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A single-node Apache Kafka broker in KRaft mode (roles broker + controller), run as a child JVM
 * from the {@code org.apache.kafka:kafka_2.13} artifact: no Docker, no installation. It owns its data
 * directory, listens on 127.0.0.1, creates Flotilla's topics once it answers, and stops cleanly.
 */
public final class KafkaBroker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KafkaBroker.class);

    private final Config config;
    private final int port;
    private final int controllerPort;
    private Process process;

    /**
     * @param dataDir        directory the broker owns (created; its {@code data} subdirectory holds the log)
     * @param port           client port; 0 picks a free one
     * @param classpath      classpath of the child JVM; must contain kafka_2.13 and this class
     * @param heap           -Xmx of the child JVM, e.g. {@code 384m}
     * @param exitWithParent child exits when this JVM dies (tests); false for a broker that outlives its launcher
     * @param createTopics   create {@link Topics#ALL} once the broker answers
     * @param startTimeout   how long to wait for the broker to answer
     * @param sasl           null for a PLAINTEXT client listener; else the client listener requires
     *                       SASL_PLAINTEXT with mechanism PLAIN and accepts exactly this user
     */
    public record Config(Path dataDir, int port, String classpath, String heap, boolean exitWithParent,
                         boolean createTopics, Duration startTimeout, SaslUser sasl) {

        public Config(Path dataDir, int port, String classpath, String heap, boolean exitWithParent,
                      boolean createTopics, Duration startTimeout) {
            this(dataDir, port, classpath, heap, exitWithParent, createTopics, startTimeout, null);
        }

        public static Config forTests(Path dataDir) {
            return new Config(dataDir, 0, System.getProperty("java.class.path"), "384m", true, true, Duration.ofSeconds(90));
        }

        /** This configuration with a SASL_PLAINTEXT client listener for {@code user}. */
        public Config withSasl(SaslUser user) {
            return new Config(dataDir, port, classpath, heap, exitWithParent, createTopics, startTimeout, user);
        }

        /** This configuration without creating Flotilla's topics: services must create them. */
        public Config withoutTopics() {
            return new Config(dataDir, port, classpath, heap, exitWithParent, false, startTimeout, sasl);
        }
    }

    /**
     * The one client identity of a SASL broker (mechanism PLAIN, as the JAAS {@code user_<name>} entry of
     * the broker's listener). The broker also talks to itself with it.
     */
    public record SaslUser(String username, String password) {

        public SaslUser {
            if (username == null || username.isBlank() || password == null || password.isEmpty()
                    || username.contains("\"") || password.contains("\"")) {
                throw new IllegalArgumentException("a SASL user needs a name and a password without quotes");
            }
        }

        /** The JAAS line a client logs in with. */
        public String clientJaas() {
            return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + username
                    + "\" password=\"" + password + "\";";
        }
    }

    public KafkaBroker(Config config) {
        this.config = config;
        this.port = config.port() == 0 ? freePort() : config.port();
        this.controllerPort = freePort();
    }

    /** Starts the child JVM and waits until the broker answers and the topics exist. */
    public synchronized KafkaBroker start() {
        if (process != null) {
            return this;
        }
        Instant begin = Instant.now();
        try {
            Files.createDirectories(config.dataDir());
            Path props = writeServerProperties();
            String clusterId = clusterId();
            List<String> cmd = new ArrayList<>();
            if (!config.exitWithParent() && Files.isExecutable(Path.of("/usr/bin/setsid"))) {
                cmd.add("/usr/bin/setsid"); // own session: a closing terminal does not take the broker down
            }
            cmd.addAll(List.of(javaBinary(), "-Xms16m", "-Xmx" + config.heap(),
                    "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
                    "-Dlog4j2.configurationFile=" + writeLog4j(), "-Dkafka.logs.dir=" + config.dataDir().resolve("logs"),
                    "-cp", config.classpath(), KafkaBrokerMain.class.getName(), props.toString(), clusterId));
            if (config.exitWithParent()) {
                cmd.add("--exit-with-parent");
            }
            ProcessBuilder pb = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()));
            pb.environment().putIfAbsent("MALLOC_ARENA_MAX", "2"); // as every service of the launcher's cluster
            if (!config.exitWithParent()) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            }
            process = pb.start();
            awaitReady();
            if (config.createTopics()) {
                TopicAdmin.ensureTopics(clientConfig(), Topics.ALL, Optional.empty(), Duration.ofSeconds(30));
            }
            log.info("Kafka broker up at {} in {} ms (pid {}, log {})", bootstrapServers(),
                    Duration.between(begin, Instant.now()).toMillis(), process.pid(), logFile());
            return this;
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("cannot start Kafka broker: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    /** What a client needs to connect: the bootstrap address and, for a SASL broker, its security settings. */
    public Map<String, Object> clientConfig() {
        Map<String, Object> conf = new java.util.HashMap<>();
        conf.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        if (config.sasl() != null) {
            conf.put(AdminClientConfig.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
            conf.put("sasl.mechanism", "PLAIN");
            conf.put("sasl.jaas.config", config.sasl().clientJaas());
        }
        return Map.copyOf(conf);
    }

    /**
     * {@link #clientConfig()} as Spring Boot properties ({@code spring.kafka.bootstrap-servers},
     * {@code spring.kafka.security.protocol}, {@code spring.kafka.properties.sasl.*}), which is how every
     * Flotilla service is pointed at this broker.
     */
    public Map<String, String> springProperties() {
        Map<String, String> p = new java.util.LinkedHashMap<>();
        p.put("spring.kafka.bootstrap-servers", bootstrapServers());
        if (config.sasl() != null) {
            p.put("spring.kafka.security.protocol", "SASL_PLAINTEXT");
            p.put("spring.kafka.properties.sasl.mechanism", "PLAIN");
            p.put("spring.kafka.properties.sasl.jaas.config", config.sasl().clientJaas());
        }
        return p;
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process == null ? -1 : process.pid();
    }

    public Path logFile() {
        return config.dataDir().resolve("broker.log");
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Stops the broker: SIGTERM (Kafka shuts down cleanly), SIGKILL after a grace period. */
    @Override
    public synchronized void close() {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /** Stops the broker and deletes its data directory. */
    public void closeAndDelete() {
        close();
        deleteRecursively(config.dataDir());
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + config.startTimeout().toNanos();
        Map<String, Object> conf = new java.util.HashMap<>(clientConfig());
        conf.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
        conf.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000);
        conf.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        try (Admin admin = Admin.create(conf)) {
            while (true) {
                if (!process.isAlive()) {
                    throw new IllegalStateException("Kafka broker exited with code " + process.exitValue()
                            + " during start-up; see " + logFile());
                }
                try {
                    admin.describeCluster().nodes().get(3, TimeUnit.SECONDS);
                    return;
                } catch (Exception notYet) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("Kafka broker did not answer within " + config.startTimeout()
                                + "; see " + logFile());
                    }
                    sleep(200);
                }
            }
        }
    }

    private Path writeServerProperties() throws IOException {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", "1");
        String client = config.sasl() == null ? "PLAINTEXT" : "SASL_PLAINTEXT";
        p.setProperty("listeners", client + "://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.setProperty("advertised.listeners", client + "://127.0.0.1:" + port);
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("inter.broker.listener.name", client);
        p.setProperty("listener.security.protocol.map", client + ":" + client + ",CONTROLLER:PLAINTEXT");
        if (config.sasl() != null) {
            SaslUser u = config.sasl();
            p.setProperty("sasl.enabled.mechanisms", "PLAIN");
            p.setProperty("sasl.mechanism.inter.broker.protocol", "PLAIN");
            p.setProperty("listener.name.sasl_plaintext.plain.sasl.jaas.config",
                    "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + u.username()
                            + "\" password=\"" + u.password() + "\" user_" + u.username() + "=\"" + u.password() + "\";");
        }
        p.setProperty("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
        p.setProperty("log.dirs", config.dataDir().resolve("data").toAbsolutePath().toString());
        p.setProperty("num.partitions", "1");
        p.setProperty("auto.create.topics.enable", "false");
        p.setProperty("offsets.topic.replication.factor", "1");
        p.setProperty("offsets.topic.num.partitions", "4");
        p.setProperty("transaction.state.log.replication.factor", "1");
        p.setProperty("transaction.state.log.min.isr", "1");
        p.setProperty("share.coordinator.state.topic.replication.factor", "1");
        p.setProperty("share.coordinator.state.topic.min.isr", "1");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        p.setProperty("log.retention.check.interval.ms", "60000");
        p.setProperty("log.cleaner.backoff.ms", "5000");
        // The cleaner's dedupe buffer is allocated on the heap when the broker starts: Kafka's 128 MiB default made
        // this broker's smallest workable heap 384 MiB and its RSS 300 MB; 16 MiB still maps ~700,000 keys per
        // cleaning, far beyond what Flotilla's compacted topics hold on one node (docs/benchmarks.md).
        p.setProperty("log.cleaner.dedupe.buffer.size", Integer.toString(16 << 20));
        p.setProperty("num.network.threads", "2");
        p.setProperty("num.io.threads", "2");
        p.setProperty("background.threads", "2");
        Path file = config.dataDir().resolve("server.properties");
        try (Writer w = Files.newBufferedWriter(file)) {
            p.store(w, "written by Flotilla's KafkaBroker");
        }
        return file;
    }

    private Path writeLog4j() throws IOException {
        Path file = config.dataDir().resolve("log4j2.yaml");
        Files.writeString(file, """
                Configuration:
                  Appenders:
                    Console:
                      name: STDOUT
                      PatternLayout:
                        pattern: "[%d] %p %m (%c)%n"
                  Loggers:
                    Root:
                      level: WARN
                      AppenderRef:
                        - ref: STDOUT
                    Logger:
                      - name: kafka.server.KafkaRaftServer
                        level: INFO
                      - name: kafka.server.BrokerServer
                        level: INFO
                """);
        return file;
    }

    /** Cluster id: reused from an earlier format of the same directory, else a new one. */
    private String clusterId() throws IOException {
        Path meta = config.dataDir().resolve("data").resolve("meta.properties");
        if (Files.exists(meta)) {
            Properties p = new Properties();
            try (var r = Files.newBufferedReader(meta)) {
                p.load(r);
            }
            String id = p.getProperty("cluster.id");
            if (id != null) {
                return id;
            }
        }
        return Uuid.randomUuid().toString();
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * A port that was free a moment ago on every address, for a listener the caller opens next.
     *
     * <p>Chosen below the kernel's ephemeral range (Linux: 32768–60999), not with {@code new ServerSocket(0)}:
     * a port from that range can be taken by any outgoing connection (a Kafka client's, a gRPC channel's)
     * between this call and the caller's bind, which made cluster tests fail now and then with a listener
     * that could not bind. Ports from 20000–31999 are only ever taken by listeners. Each JVM starts at its
     * own random point and walks forward, so two calls in one JVM never return the same port and two test
     * JVMs rarely meet; the local cluster's fixed ports (6380, 7001–7400, 8000–8200, 9092) are outside it.
     */
    public static int freePort() {
        for (int tries = 0; tries < LISTENER_PORTS; tries++) {
            int port = LISTENER_PORT_BASE + Math.floorMod(nextListenerPort.getAndIncrement(), LISTENER_PORTS);
            if (bindable(port)) {
                return port;
            }
        }
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final int LISTENER_PORT_BASE = 20_000;
    private static final int LISTENER_PORTS = 12_000;
    private static final AtomicInteger nextListenerPort =
            new AtomicInteger(new SplittableRandom(System.nanoTime() ^ ProcessHandle.current().pid()).nextInt(LISTENER_PORTS));

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress((InetAddress) null, port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Deletes a directory tree; missing is fine. */
    public static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            log.warn("could not delete {}: {}", dir, e.getMessage());
        }
    }
}
