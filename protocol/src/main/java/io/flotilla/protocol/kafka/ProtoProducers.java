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
     * @param producerConfig the service's producer settings (bootstrap servers, security, anything from
     *                       {@code spring.kafka.*}); they replace Flotilla's defaults key by key
     * @param clientId       shows up in broker logs and metrics
     * @param maxBlockMs     longest a send may block while metadata is unavailable
     * @param required       settings the caller depends on (ordering, blocking), applied last
     */
    public static Producer<String, Object> create(Map<String, Object> producerConfig, String clientId, int maxBlockMs,
                                                  Map<String, Object> required) {
        Map<String, Object> conf = new HashMap<>();
        conf.put(ProducerConfig.ACKS_CONFIG, "1");
        conf.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        conf.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        conf.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        conf.putAll(producerConfig);
        // serializers are given as instances below; class names from the configuration would only conflict
        conf.remove(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
        conf.remove(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
        conf.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        conf.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlockMs);
        conf.putAll(required);
        @SuppressWarnings({"unchecked", "rawtypes"})
        Serializer<Object> values = (Serializer) new ProtoSerializer<>();
        return new KafkaProducer<>(conf, new StringSerializer(), values);
    }

    /** Settings of a client that knows nothing but the bootstrap address (tests, tools on a local broker). */
    public static Map<String, Object> plaintext(String bootstrapServers) {
        return Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    }
}
