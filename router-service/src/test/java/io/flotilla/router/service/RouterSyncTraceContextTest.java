package io.flotilla.router.service;

import io.flotilla.router.core.RouterDefaults;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.cluster.WorkerDirectory;
import io.flotilla.router.core.RouterConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bookings a Route and a Release share with other router replicas are records caused by one request: each
 * carries that request's W3C trace context, captured on the call's thread though a sender thread sends it.
 */
class RouterSyncTraceContextTest {

    @Test
    void routerSyncRecordsCarryTheTraceContextOfTheCallThatCausedThem() {
        MockProducer<String, Object> producer = new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]);
        RouterConfig config = RouterDefaults.config();
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        String spanId = "00f067aa0ba902b7";
        try (IndexerClient indexer = new IndexerClient("127.0.0.1:1", Duration.ofMillis(50))) {
            RequestRouter router = new RequestRouter(config, new WorkerDirectory(), BookingLedger.create("r", config), indexer,
                    producer, new RouterMetrics(new SimpleMeterRegistry()), Clock.systemUTC(), new SplittableRandom(1), "r");
            router.onStatus(WorkerStatus.newBuilder().setWorkerId("w0").setEpoch(1).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                    .setModel("m").setState(WorkerState.WORKER_STATE_READY).setEndpoint("127.0.0.1:7100").setBlockSize(16)
                    .setKvLayout("bf16/bs16/paged").setLeaseMs(600_000)
                    .setCapacity(WorkerCapacity.newBuilder().setTotalKvBlocks(1024)).build());
            Span caller = Span.wrap(SpanContext.create(traceId, spanId, TraceFlags.getSampled(), TraceState.getDefault()));
            try (Scope ignored = caller.makeCurrent()) {
                router.route(RouteRequest.newBuilder().setRequestId("traced").setModel("m").setIsl(64).setOsl(4)
                        .setBlockSize(16).build());
                router.release("traced");
            }
            router.route(RouteRequest.newBuilder().setRequestId("untraced").setModel("m").setIsl(64).setOsl(4)
                    .setBlockSize(16).build());
            router.close(); // sends what is queued
        }

        List<ProducerRecord<String, Object>> sync = producer.history().stream()
                .filter(r -> r.topic().equals(Topics.ROUTER_SYNC.name())).toList();
        assertThat(sync).hasSize(3);
        assertThat(sync.subList(0, 2)).as("the traced Route's booking and its release")
                .allSatisfy(r -> assertThat(traceparent(r)).isEqualTo("00-" + traceId + "-" + spanId + "-01"));
        assertThat(traceparent(sync.get(2))).as("no span current, no header").isNull();
    }

    private static String traceparent(ProducerRecord<String, Object> record) {
        Header h = record.headers().lastHeader("traceparent");
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
