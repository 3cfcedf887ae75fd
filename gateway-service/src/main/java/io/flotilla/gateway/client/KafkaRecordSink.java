package io.flotilla.gateway.client;

import io.flotilla.boot.trace.TracedRecord;
import io.flotilla.protocol.kafka.ProtoProducers;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.RequestRecord;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.time.Duration;
import java.util.Map;

/**
 * Request records on {@code flotilla.requests}, keyed by request id and carrying the request's trace context
 * as W3C headers, and load reports on
 * {@code flotilla.gateway-load}, keyed by gateway id, over one producer. {@code send} blocks at most
 * {@code max.block.ms} (500 ms) when the broker's metadata is unknown; undelivered records expire
 * after the delivery timeout and count as errors.
 */
public final class KafkaRecordSink implements RequestRecordSink {

    private final Producer<String, Object> producer;
    /** Kafka's own producer metrics, once bound (the producer is not a bean, so Boot's binder does not see it). */
    private KafkaClientMetrics metrics;

    /** @param producerConfig the gateway's producer settings ({@code spring.kafka.*}) */
    public KafkaRecordSink(Map<String, Object> producerConfig) {
        this.producer = ProtoProducers.create(producerConfig, "flotilla-gateway", 500, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.LINGER_MS_CONFIG, 20));
    }

    @Override
    public void send(RequestRecord record, Runnable onError) {
        deliver(new ProducerRecord<>(Topics.REQUESTS.name(), record.getId(), record), onError);
    }

    /** The record with its request's W3C {@code traceparent}/{@code tracestate} as headers. */
    @Override
    public void send(TracedRecord<RequestRecord> record, Runnable onError) {
        deliver(record.toRecord(Topics.REQUESTS.name(), record.value().getId()), onError);
    }

    private void deliver(ProducerRecord<String, Object> record, Runnable onError) {
        try {
            producer.send(record, (meta, error) -> {
                if (error != null) {
                    onError.run();
                }
            });
        } catch (RuntimeException e) { // metadata unavailable past max.block.ms, or producer closed
            onError.run();
        }
    }

    @Override
    public void load(GatewayLoad load, Runnable onError) {
        deliver(new ProducerRecord<>(Topics.GATEWAY_LOAD.name(), load.getGatewayId(), load), onError);
    }

    /** Publishes the producer's own metrics ({@code kafka_producer_*}, tagged with its client id) on {@code registry}. */
    public synchronized KafkaRecordSink bindMetrics(MeterRegistry registry) {
        if (metrics == null) {
            metrics = new KafkaClientMetrics(producer);
            metrics.bindTo(registry);
        }
        return this;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (metrics != null) {
                metrics.close();
            }
        }
        producer.close(Duration.ofSeconds(2));
    }
}
