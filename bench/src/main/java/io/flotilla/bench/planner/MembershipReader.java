package io.flotilla.bench.planner;

import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Reads every worker status of {@code flotilla.workers} from the beginning up to the end as of the call. */
public final class MembershipReader {

    private MembershipReader() {
    }

    public static List<WorkerStatus> readAll(String bootstrap, Duration timeout) {
        Map<String, Object> conf = new HashMap<>();
        conf.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        conf.put(ConsumerConfig.CLIENT_ID_CONFIG, "planner-eval-membership");
        conf.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        conf.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        List<WorkerStatus> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<String, WorkerStatus> consumer = new KafkaConsumer<>(conf, new StringDeserializer(),
                new ProtoDeserializer.WorkerStatuses())) {
            List<PartitionInfo> infos = consumer.partitionsFor(Topics.WORKERS.name(), timeout);
            List<TopicPartition> parts = infos.stream().map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts, timeout);
            while (parts.stream().anyMatch(tp -> consumer.position(tp, timeout) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + Topics.WORKERS.name() + " to its end within " + timeout);
                }
                for (ConsumerRecord<String, WorkerStatus> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.value() != null) {
                        out.add(r.value());
                    }
                }
            }
        }
        return out;
    }
}
