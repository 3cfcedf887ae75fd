package io.flotilla.boot.trace;

import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A Kafka record's value with the trace context of the request that caused it, captured on the thread that
 * handles the request and sent later from a sender thread: the record then carries W3C {@code traceparent}
 * (and {@code tracestate}) headers, so a consumer (or someone reading the topic) can tie it to the request's
 * trace. Micrometer's OpenTelemetry bridge keeps the current span in OpenTelemetry's context, so the API's W3C
 * propagator reads it without a bean; with tracing off no span is current and no header is added. Spring
 * Kafka's observation would do the same through {@code KafkaTemplate}, which these services do not use: their
 * producers are plain clients behind bounded queues that must never block a request.
 *
 * @param value   what the record carries
 * @param headers the trace context headers, empty when no span was current
 */
public record TracedRecord<V>(V value, List<Header> headers) {

    public TracedRecord {
        headers = List.copyOf(headers);
    }

    /** {@code value} with the calling thread's trace context. */
    public static <V> TracedRecord<V> capture(V value) {
        List<Header> headers = new ArrayList<>(2);
        W3CTraceContextPropagator.getInstance().inject(Context.current(), headers,
                (h, key, v) -> h.add(new RecordHeader(key, v.getBytes(StandardCharsets.UTF_8))));
        return new TracedRecord<>(value, headers);
    }

    /** The record for {@code topic} and {@code key}, with the captured headers. */
    public <K> ProducerRecord<K, Object> toRecord(String topic, K key) {
        return new ProducerRecord<>(topic, null, key, value, headers);
    }
}
