package io.flotilla.cluster.kafka;

import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.ProtoSerializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(KafkaBrokerExtension.class)
class KafkaBrokerTest {

    @Test
    void createsEveryFlotillaTopicWithItsConfig(KafkaBroker kafka) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            Set<String> names = admin.listTopics().names().get();
            assertThat(names).containsAll(Topics.ALL.stream().map(t -> t.name()).collect(Collectors.toSet()));
            Map<String, TopicDescription> kv = admin.describeTopics(List.of(Topics.KV_EVENTS.name())).allTopicNames().get();
            assertThat(kv.get(Topics.KV_EVENTS.name()).partitions()).hasSize(Topics.KV_EVENTS.partitions());
            var resource = new ConfigResource(ConfigResource.Type.TOPIC, Topics.WORKERS.name());
            var cfg = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(cfg.get("cleanup.policy").value()).isEqualTo("compact");
        }
    }

    @Test
    void protobufRecordsRoundTripAndMalformedOnesAreSkipped(KafkaBroker kafka) {
        String topic = Topics.WORKERS.name();
        String workerId = "broker-test-" + System.nanoTime();
        WorkerStatus status = WorkerStatus.newBuilder().setWorkerId(workerId).setEpoch(-7L).setBlockSize(16).build();
        try (var producer = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                new StringSerializer(), new ProtoSerializer<WorkerStatus>());
             var raw = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                     new StringSerializer(), new ByteArraySerializer())) {
            raw.send(new ProducerRecord<>(topic, workerId, new byte[]{(byte) 0xff, 0x01, 0x02})).get();
            producer.send(new ProducerRecord<>(topic, workerId, status)).get();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        long malformedBefore = ProtoDeserializer.malformedRecords();
        List<WorkerStatus> seen = new ArrayList<>();
        try (var consumer = new KafkaConsumer<>(Map.<String, Object>of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), new ProtoDeserializer.WorkerStatuses())) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            long deadline = System.currentTimeMillis() + 15_000;
            while (seen.isEmpty() && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, WorkerStatus> r : consumer.poll(Duration.ofMillis(200))) {
                    if (workerId.equals(r.key()) && r.value() != null) {
                        seen.add(r.value());
                    }
                }
            }
        }
        assertThat(seen).containsExactly(status);
        assertThat(ProtoDeserializer.malformedRecords()).isGreaterThan(malformedBefore);
    }

    @Test
    void restartKeepsDataAndStopLeavesNoProcess(@TempDir Path dir) throws Exception {
        KafkaBroker.Config cfg = KafkaBroker.Config.forTests(dir);
        int port = KafkaBroker.freePort();
        cfg = new KafkaBroker.Config(dir, port, cfg.classpath(), cfg.heap(), true, true, cfg.startTimeout());
        long pid;
        try (KafkaBroker broker = new KafkaBroker(cfg).start()) {
            pid = broker.pid();
            try (var producer = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                    new StringSerializer(), new StringSerializer())) {
                producer.send(new ProducerRecord<>(Topics.REQUESTS.name(), "k", "v")).get();
            }
        }
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        try (KafkaBroker again = new KafkaBroker(cfg).start();
             var consumer = new KafkaConsumer<>(Map.<String, Object>of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, again.bootstrapServers()),
                     new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> parts = consumer.partitionsFor(Topics.REQUESTS.name()).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            long total = consumer.endOffsets(parts).values().stream().mapToLong(Long::longValue).sum();
            assertThat(total).isEqualTo(1);
        }
    }
}
