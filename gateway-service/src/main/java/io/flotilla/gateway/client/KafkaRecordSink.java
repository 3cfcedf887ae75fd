package io.flotilla.gateway.client;

import io.flotilla.protocol.kafka.ProtoSerializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.RequestRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.Map;

/**
 * Request records on {@code flotilla.requests}, keyed by request id. {@code send} blocks at most
 * {@code max.block.ms} (500 ms) when the broker's metadata is unknown; undelivered records expire
 * after the delivery timeout and count as errors.
 */
public final class KafkaRecordSink implements RequestRecordSink {

    private final Producer<String, RequestRecord> producer;

    public KafkaRecordSink(String bootstrapServers) {
        Map<String, Object> conf = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.CLIENT_ID_CONFIG, "flotilla-gateway",
                ProducerConfig.ACKS_CONFIG, "1",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 500,
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        this.producer = new KafkaProducer<>(conf, new StringSerializer(), new ProtoSerializer<>());
    }

    @Override
    public void send(RequestRecord record, Runnable onError) {
        try {
            producer.send(new ProducerRecord<>(Topics.REQUESTS.name(), record.getId(), record), (meta, error) -> {
                if (error != null) {
                    onError.run();
                }
            });
        } catch (RuntimeException e) { // metadata unavailable past max.block.ms, or producer closed
            onError.run();
        }
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(2));
    }
}
