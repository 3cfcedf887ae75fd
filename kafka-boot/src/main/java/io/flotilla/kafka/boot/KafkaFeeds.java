package io.flotilla.kafka.boot;

import io.flotilla.protocol.kafka.TopicTailer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The consumers a service runs, so health can name a feed that cannot read and readiness can wait
 * for the first full read of the state topic. Services add their {@link TopicTailer}s when they start
 * them and remove them when they stop (a rebuild replaces them). With a meter registry ({@link #bindMetrics}, which
 * the auto-configuration calls), each feed's consumer shows as {@code kafka_consumer_*} while it is added.
 */
public final class KafkaFeeds {

    private final List<TopicTailer<?>> tailers = new CopyOnWriteArrayList<>();
    private final List<String> loadedOnce = new CopyOnWriteArrayList<>();
    private final Map<TopicTailer<?>, KafkaClientMetrics> metrics = new ConcurrentHashMap<>();
    private volatile MeterRegistry registry;

    /** Feeds added from now on have their consumer's metrics in {@code registry}. */
    public void bindMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    public <T extends TopicTailer<?>> T add(T tailer) {
        tailers.add(tailer);
        MeterRegistry r = registry;
        if (r != null) {
            KafkaClientMetrics m = new KafkaClientMetrics(tailer.client());
            m.bindTo(r);
            metrics.put(tailer, m);
        }
        return tailer;
    }

    public void remove(TopicTailer<?> tailer) {
        if (tailer.caughtUpOnce()) {
            loadedOnce.add(tailer.topic());
        }
        tailers.remove(tailer);
        KafkaClientMetrics m = metrics.remove(tailer);
        if (m != null) {
            m.close();
        }
    }

    /** Topic → why its feed cannot read, "" while it reads. */
    public Map<String, String> problems() {
        Map<String, String> out = new LinkedHashMap<>();
        for (TopicTailer<?> t : tailers) {
            out.put(t.topic(), t.lastFailure());
        }
        return out;
    }

    /** True once a feed of {@code topic} has read to the end of it (this process, any incarnation of the feed). */
    public boolean loaded(String topic) {
        if (loadedOnce.contains(topic)) {
            return true;
        }
        for (TopicTailer<?> t : tailers) {
            if (t.topic().equals(topic) && t.caughtUpOnce()) {
                return true;
            }
        }
        return false;
    }
}
