package io.flotilla.protocol.kafka;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.util.HashMap;
import java.util.Map;

/**
 * The Kafka producer every Flotilla service uses for its protobuf records: string keys, protobuf
 * values of any type, and settings for a request path that must never wait on Kafka — a send blocks
 * the caller for at most {@code maxBlockMs} when the broker is unreachable, and an undelivered
 * record fails after the delivery timeout (callers count it; state consumers repair what is lost).
 */
public final class ProtoProducers {

    private ProtoProducers() {
    }

    /**
     * @param clientId   shows up in broker logs and metrics
     * @param maxBlockMs longest a send may block while metadata is unavailable
     * @param overrides  further producer settings, applied last
     */
    public static Producer<String, Object> create(String bootstrapServers, String clientId, int maxBlockMs,
                                                  Map<String, Object> overrides) {
        Map<String, Object> conf = new HashMap<>();
        conf.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        conf.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        conf.put(ProducerConfig.ACKS_CONFIG, "1");
        conf.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        conf.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlockMs);
        conf.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        conf.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        conf.putAll(overrides);
        @SuppressWarnings({"unchecked", "rawtypes"})
        Serializer<Object> values = (Serializer) new ProtoSerializer<>();
        return new KafkaProducer<>(conf, new StringSerializer(), values);
    }
}
