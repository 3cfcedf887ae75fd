package io.flotilla.cluster.kafka;

import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.ProtoSerializer;
import io.flotilla.protocol.kafka.TopicTailer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class TopicTailerTest {

    @Test
    void deliversRecordsSkipsPoisonAndReportsAnOutage(@TempDir Path dir) throws Exception {
        KafkaBroker.Config base = KafkaBroker.Config.forTests(dir);
        KafkaBroker.Config cfg = new KafkaBroker.Config(dir, KafkaBroker.freePort(), base.classpath(), base.heap(), true, true,
                base.startTimeout());
        List<WorkerStatus> seen = new CopyOnWriteArrayList<>();
        List<String> nullKeys = new CopyOnWriteArrayList<>();
        KafkaBroker broker = new KafkaBroker(cfg).start();
        try (var producer = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                new StringSerializer(), new ProtoSerializer<WorkerStatus>());
             var raw = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                     new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(Topics.WORKERS.name(), "w1", WorkerStatus.newBuilder().setWorkerId("w1").build())).get();
            raw.send(new ProducerRecord<>(Topics.WORKERS.name(), "poison", new byte[]{(byte) 0xff, 0x7f})).get();
        }
        try (TopicTailer<WorkerStatus> tailer = new TopicTailer<>("test", broker.clientConfig(), Topics.WORKERS.name(),
                new ProtoDeserializer.WorkerStatuses(), TopicTailer.Start.EARLIEST, Map.of(), records -> records.forEach(r -> {
                    if (r.value() == null) {
                        nullKeys.add(r.key());
                    } else {
                        seen.add(r.value());
                    }
                }), Clock.systemUTC()).start()) {
            await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 1 && nullKeys.equals(List.of("poison")));
            await().atMost(Duration.ofSeconds(10)).until(tailer::healthy);
            // lag is measured once a second: the first check may predate the poll that read both records
            await().atMost(Duration.ofSeconds(10)).until(() -> tailer.lag() == 0);
            assertThat(tailer.caughtUpOnce()).isTrue();

            broker.close();
            await().atMost(Duration.ofSeconds(20)).until(() -> !tailer.healthy());
            assertThat(tailer.unhealthySinceMs()).isPositive();

            broker = new KafkaBroker(cfg).start(); // same port and data directory
            await().atMost(Duration.ofSeconds(30)).until(tailer::healthy);
        } finally {
            broker.close();
        }
    }
}
