package io.flotilla.protocol.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Creates Flotilla's topics with their configs ({@link Topics}) and checks the ones that exist: a
 * topic whose {@code cleanup.policy} differs from the declared one is a {@link TopicConfigException}
 * naming the topic and the setting (a non-compacted {@code flotilla.workers} would make every start-up
 * replay every heartbeat ever written). Other differences (retention, partitions) are reported in the
 * result, not refused: operators tune them.
 */
public final class TopicAdmin {

    /** The cleanup policy of an existing topic is not the declared one. */
    public static final class TopicConfigException extends IllegalStateException {
        public TopicConfigException(String message) {
            super(message);
        }
    }

    /**
     * What {@link #ensureTopics} did.
     *
     * @param created     topics this call created
     * @param checked     topics that existed and have the declared cleanup policy
     * @param differences settings of existing topics that differ from the declaration, as
     *                    {@code topic: key=actual (declared declared)}; informational
     */
    public record Result(List<String> created, List<String> checked, List<String> differences) {
    }

    private TopicAdmin() {
    }

    /**
     * Creates every missing topic of {@code topics} and checks the existing ones.
     *
     * @param adminConfig       the service's admin client settings (bootstrap servers, security)
     * @param replicationFactor replication factor of created topics; empty: the broker's
     *                          {@code default.replication.factor}
     * @throws TopicConfigException when an existing topic has another cleanup policy
     * @throws IllegalStateException when Kafka does not answer within {@code timeout} or refuses (the
     *                               message says which, see {@link KafkaFailures})
     */
    public static Result ensureTopics(Map<String, Object> adminConfig, Collection<Topic> topics,
                                      Optional<Short> replicationFactor, Duration timeout) {
        try (Admin admin = Admin.create(withTimeouts(adminConfig, timeout))) {
            return ensureTopics(admin, topics, replicationFactor, timeout);
        }
    }

    /** As {@link #ensureTopics(Map, Collection, Optional, Duration)} with an admin client the caller owns. */
    public static Result ensureTopics(Admin admin, Collection<Topic> topics, Optional<Short> replicationFactor,
                                      Duration timeout) {
        long ms = timeout.toMillis();
        try {
            Set<String> existing = admin.listTopics().names().get(ms, TimeUnit.MILLISECONDS);
            List<NewTopic> missing = new ArrayList<>();
            List<Topic> present = new ArrayList<>();
            for (Topic t : topics) {
                if (existing.contains(t.name())) {
                    present.add(t);
                } else {
                    missing.add(new NewTopic(t.name(), Optional.of(t.partitions()), replicationFactor).configs(t.configs()));
                }
            }
            List<String> created = new ArrayList<>();
            if (!missing.isEmpty()) {
                for (var e : admin.createTopics(missing).values().entrySet()) {
                    try {
                        e.getValue().get(ms, TimeUnit.MILLISECONDS);
                        created.add(e.getKey());
                    } catch (ExecutionException ex) {
                        if (!(ex.getCause() instanceof TopicExistsException)) {
                            throw new IllegalStateException("cannot create topic " + e.getKey() + ": "
                                    + KafkaFailures.describe(ex.getCause()), ex.getCause());
                        }
                        present.add(topics.stream().filter(t -> t.name().equals(e.getKey())).findFirst().orElseThrow());
                    }
                }
            }
            List<String> differences = new ArrayList<>();
            List<String> checked = check(admin, present, ms, differences);
            return new Result(created, checked, differences);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot create or check Flotilla's topics: " + KafkaFailures.describe(e), e);
        }
    }

    /** Checks that each of {@code topics} exists, for topics a service only reads; returns the missing ones. */
    public static List<String> missing(Admin admin, Collection<Topic> topics, Duration timeout)
            throws ExecutionException, InterruptedException, TimeoutException {
        Set<String> existing = admin.listTopics().names().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return topics.stream().map(Topic::name).filter(n -> !existing.contains(n)).toList();
    }

    private static List<String> check(Admin admin, List<Topic> present, long ms, List<String> differences)
            throws ExecutionException, InterruptedException, TimeoutException {
        if (present.isEmpty()) {
            return List.of();
        }
        Map<ConfigResource, Topic> resources = new HashMap<>();
        for (Topic t : present) {
            resources.put(new ConfigResource(ConfigResource.Type.TOPIC, t.name()), t);
        }
        Map<ConfigResource, Config> actual = admin.describeConfigs(resources.keySet()).all().get(ms, TimeUnit.MILLISECONDS);
        List<String> checked = new ArrayList<>();
        List<String> wrongPolicy = new ArrayList<>();
        for (var e : resources.entrySet()) {
            Topic t = e.getValue();
            Config config = actual.get(e.getKey());
            for (var declared : t.configs().entrySet()) {
                ConfigEntry entry = config == null ? null : config.get(declared.getKey());
                String value = entry == null ? null : entry.value();
                if (declared.getValue().equals(value)) {
                    continue;
                }
                String line = t.name() + ": " + declared.getKey() + "=" + value + " (declared " + declared.getValue() + ")";
                if (TopicConfig.CLEANUP_POLICY_CONFIG.equals(declared.getKey())) {
                    wrongPolicy.add(line);
                } else {
                    differences.add(line);
                }
            }
            checked.add(t.name());
        }
        if (!wrongPolicy.isEmpty()) {
            wrongPolicy.sort(null);
            throw new TopicConfigException("Kafka topic settings Flotilla cannot run with: " + String.join("; ", wrongPolicy)
                    + ". Fix them (kafka-configs.sh --alter --entity-type topics --entity-name TOPIC --add-config "
                    + "cleanup.policy=VALUE) or delete the topics so that Flotilla creates them.");
        }
        return checked;
    }

    private static Map<String, Object> withTimeouts(Map<String, Object> config, Duration timeout) {
        Map<String, Object> conf = new HashMap<>(config);
        int ms = (int) Math.min(timeout.toMillis(), Integer.MAX_VALUE);
        conf.putIfAbsent(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
        conf.putIfAbsent(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
        return conf;
    }
}
