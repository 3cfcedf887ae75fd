package io.flotilla.gateway.client;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.RequestOutcome;
import io.flotilla.protocol.v1.RequestRecord;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Request records reach {@code flotilla.requests} on a real broker, keyed by request id, and the producer is metered. */
@ExtendWith(KafkaBrokerExtension.class)
class KafkaRecordSinkTest {

    @Test
    void recordsArePublishedKeyedByRequestId(KafkaBroker kafka) throws Exception {
        String id = "gw-record-" + System.nanoTime();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(Topics.REQUESTS.name()).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position); // fix the starting offsets before producing

            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            RequestRecordPublisher publisher = new RequestRecordPublisher(
                    new KafkaRecordSink(kafka.clientConfig()).bindMetrics(registry), 100);
            try {
                publisher.publish(RequestRecord.newBuilder().setId(id).setModel("flotilla-sim").setIsl(12).setOsl(3)
                        .setOutcome(RequestOutcome.REQUEST_OUTCOME_OK).setWorker("worker-a").build());

                RequestRecord[] found = new RequestRecord[1];
                await().atMost(Duration.ofSeconds(60)).until(() -> {
                    for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        if (id.equals(r.key())) {
                            found[0] = RequestRecord.parseFrom(r.value());
                        }
                    }
                    return found[0] != null;
                });
                assertThat(found[0].getId()).isEqualTo(id);
                assertThat(found[0].getWorker()).isEqualTo("worker-a");
                assertThat(found[0].getOsl()).isEqualTo(3);
                assertThat(Optional.of(publisher.failed())).contains(0L);
                // the producer is not a bean, so its own metrics are bound by hand: they show what it sent
                await().atMost(Duration.ofSeconds(30)).until(() -> registry.find("kafka.producer.record.send.total")
                        .functionCounter() != null
                        && registry.find("kafka.producer.record.send.total").functionCounter().count() >= 1);
            } finally {
                publisher.close();
            }
        }
    }
}
