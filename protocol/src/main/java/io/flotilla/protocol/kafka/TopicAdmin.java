package io.flotilla.protocol.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Creates Flotilla's topics with their configs; topics that already exist are left as they are. */
public final class TopicAdmin {

    private TopicAdmin() {
    }

    /**
     * Creates every missing topic of {@code topics} on the cluster at {@code bootstrapServers}.
     *
     * @return the names of the topics this call created
     */
    public static List<String> ensureTopics(String bootstrapServers, Collection<Topic> topics, Duration timeout) {
        Map<String, Object> conf = Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeout.toMillis(), Integer.MAX_VALUE),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Math.min(timeout.toMillis(), Integer.MAX_VALUE));
        try (Admin admin = Admin.create(conf)) {
            Set<String> existing = admin.listTopics().names().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            List<NewTopic> missing = new ArrayList<>();
            for (Topic t : topics) {
                if (!existing.contains(t.name())) {
                    missing.add(new NewTopic(t.name(), t.partitions(), (short) 1).configs(t.configs()));
                }
            }
            List<String> created = new ArrayList<>();
            if (missing.isEmpty()) {
                return created;
            }
            var results = admin.createTopics(missing).values();
            for (var e : results.entrySet()) {
                try {
                    e.getValue().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                    created.add(e.getKey());
                } catch (ExecutionException ex) {
                    if (!(ex.getCause() instanceof TopicExistsException)) {
                        throw new IllegalStateException("cannot create topic " + e.getKey() + ": " + ex.getCause().getMessage(), ex.getCause());
                    }
                }
            }
            return created;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Kafka at " + bootstrapServers + " did not answer: " + e.getMessage(), e);
        }
    }
}
