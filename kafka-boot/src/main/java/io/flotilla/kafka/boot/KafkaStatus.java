package io.flotilla.kafka.boot;

import io.flotilla.protocol.kafka.KafkaFailures;
import io.flotilla.protocol.kafka.Topic;
import io.flotilla.protocol.kafka.TopicAdmin;
import io.flotilla.protocol.kafka.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One service's relation to Kafka: creates or checks the topics it declares ({@link KafkaTopicUse}) and
 * keeps asking the broker whether it answers, so health can say what is wrong (authentication,
 * unreachable, missing topic) instead of reporting UP while nothing reaches Kafka.
 *
 * <p>Start-up ({@link #start}): the topics are created or checked, waiting at most
 * {@code startupCheckTimeout}; a topic with the wrong cleanup policy fails the start with a message
 * naming topic and setting. When Kafka does not answer in time the service starts anyway and the
 * background check (every {@code checkInterval}, one daemon thread) creates or checks them once it
 * answers; a wrong policy found then turns the health DOWN and is logged as an error.
 */
public final class KafkaStatus implements AutoCloseable {

    /**
     * The last check.
     *
     * @param up      the broker answered, authentication passed and every declared topic exists and is
     *                configured as declared
     * @param problem what is wrong ("" when up), e.g. {@code authentication: …}, {@code unreachable: …},
     *                {@code missing topic: flotilla.workers}
     * @param details everything the health component shows
     */
    public record Report(boolean up, String problem, Map<String, Object> details) {
    }

    private static final Logger log = LoggerFactory.getLogger(KafkaStatus.class);

    private final KafkaClients clients;
    private final KafkaTopicUse use;
    private final FlotillaKafkaProperties properties;
    private final Clock clock;
    private Admin admin;
    private ScheduledExecutorService timer;
    private volatile Report last;
    private volatile boolean topicsReady;
    private volatile TopicAdmin.Result topics;
    private volatile String topicProblem = "";

    public KafkaStatus(KafkaClients clients, KafkaTopicUse use, FlotillaKafkaProperties properties, Clock clock) {
        this.clients = clients;
        this.use = use;
        this.properties = properties;
        this.clock = clock;
        this.last = new Report(false, "not checked yet", Map.of("bootstrap", clients.bootstrapServers()));
    }

    /**
     * Creates or checks the topics (bounded by {@code startupCheckTimeout}) and starts the background check.
     *
     * @throws TopicAdmin.TopicConfigException when a declared topic exists with another cleanup policy
     */
    public synchronized void start() {
        Map<String, Object> conf = new HashMap<>(clients.admin());
        long requestMs = Math.max(1000, Math.min(10_000, properties.checkInterval().toMillis()));
        conf.putIfAbsent(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) requestMs);
        conf.putIfAbsent(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) requestMs);
        conf.putIfAbsent(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 2000);
        conf.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, "flotilla-kafka-status");
        admin = Admin.create(conf);
        Duration wait = properties.startupCheckTimeout();
        if (!wait.isZero() && !wait.isNegative()) {
            try {
                ensureTopics(wait);
            } catch (TopicAdmin.TopicConfigException e) {
                close();
                throw e;
            }
            if (!topicsReady) {
                log.warn("Kafka at {} did not answer within {} ({}); starting anyway, topics are created or checked "
                        + "once it answers", clients.bootstrapServers(), wait, topicProblem);
            }
        }
        check();
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kafka-status");
            t.setDaemon(true);
            return t;
        });
        long every = properties.checkInterval().toMillis();
        timer.scheduleWithFixedDelay(this::check, every, every, TimeUnit.MILLISECONDS);
    }

    /** The last check's verdict. */
    public Report report() {
        return last;
    }

    /** Whether the service has loaded its state from Kafka once; true for services that need none. */
    public boolean stateLoaded() {
        return use.stateLoaded() == null || use.stateLoaded().getAsBoolean();
    }

    /** Whether the readiness group waits for {@link #stateLoaded()}. */
    public boolean gatesReadiness() {
        return use.stateLoaded() != null;
    }

    /** One round: topics (until they are ready), broker, read topics, the service's feeds. Never throws. */
    void check() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("bootstrap", clients.bootstrapServers());
        details.put("securityProtocol", clients.securityProtocol());
        List<String> problems = new ArrayList<>();
        try {
            if (!topicsReady) {
                ensureTopics(Duration.ofMillis(Math.max(1000, properties.checkInterval().toMillis())));
            }
        } catch (TopicAdmin.TopicConfigException e) {
            log.error("{}", e.getMessage());
        }
        if (!topicProblem.isEmpty()) {
            problems.add(topicProblem);
        }
        if (topicsReady) {
            try {
                int nodes = admin.describeCluster().nodes().get(properties.checkInterval().toMillis() + 1000,
                        TimeUnit.MILLISECONDS).size();
                details.put("brokers", nodes);
                List<String> missing = TopicAdmin.missing(admin, use.reads(),
                        Duration.ofMillis(properties.checkInterval().toMillis() + 1000));
                if (!missing.isEmpty()) {
                    problems.add("missing topic: " + String.join(", ", missing)
                            + " (written by services not started yet, or not created: auto-create is off)");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                problems.add(KafkaFailures.describe(e));
            }
        }
        TopicAdmin.Result t = topics;
        if (t != null) {
            details.put("topicsCreated", t.created());
            details.put("topicsChecked", t.checked());
            if (!t.differences().isEmpty()) {
                details.put("topicDifferences", t.differences());
            }
        }
        Map<String, String> feeds = new LinkedHashMap<>();
        use.feeds().get().forEach((name, problem) -> feeds.put(name, problem.isEmpty() ? "reading" : problem));
        if (!feeds.isEmpty()) {
            details.put("feeds", feeds);
        }
        details.put("stateLoaded", stateLoaded());
        details.put("checkedAt", Instant.now(clock).toString());
        String problem = String.join("; ", problems);
        if (!problem.isEmpty()) {
            details.put("problem", problem);
        }
        Report previous = last;
        last = new Report(problem.isEmpty(), problem, Map.copyOf(details));
        if (previous.up() && !problem.isEmpty()) {
            log.warn("Kafka at {}: {}", clients.bootstrapServers(), problem);
        } else if (!previous.up() && problem.isEmpty() && previous.details().containsKey("problem")) {
            log.info("Kafka at {} answers again", clients.bootstrapServers());
        }
    }

    private void ensureTopics(Duration timeout) {
        List<Topic> declared = use.writes().stream()
                .map(t -> properties.kvEventsPartitions() != null && t.name().equals(Topics.KV_EVENTS.name())
                        ? t.withPartitions(properties.kvEventsPartitions()) : t)
                .toList();
        try {
            Optional<Short> rf = Optional.ofNullable(properties.replicationFactor()).map(Integer::shortValue);
            TopicAdmin.Result r = TopicAdmin.ensureTopics(admin, declared, rf, timeout);
            topics = r;
            topicsReady = true;
            topicProblem = "";
            if (!r.created().isEmpty()) {
                log.info("created Kafka topics {}", r.created());
            }
            r.differences().forEach(d -> log.warn("Kafka topic setting differs from Flotilla's declaration: {}", d));
        } catch (TopicAdmin.TopicConfigException e) {
            topicProblem = "topic config: " + e.getMessage();
            throw e;
        } catch (IllegalStateException e) {
            topicProblem = e.getCause() == null ? e.getMessage() : KafkaFailures.describe(e.getCause());
        }
    }

    @Override
    public synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(1));
            admin = null;
        }
    }
}
