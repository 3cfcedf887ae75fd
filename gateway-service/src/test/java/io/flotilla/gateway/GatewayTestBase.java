package io.flotilla.gateway;

import io.flotilla.gateway.client.RequestRecordSink;
import io.flotilla.gateway.fakes.FakeCluster;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.bean.override.convention.TestBean;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.time.Duration;

/**
 * The gateway on a random port against the {@link FakeCluster} (real gRPC over local sockets), with
 * request records captured in memory. Generous router deadlines keep a loaded build machine from
 * turning into flaky 503s; nothing here asserts on timing. A worker stream that stalls is given up after
 * 45 s (and migrated), inside the client's 60 s: a test then sees the gateway recover instead of its own
 * timeout. A test that times out anyway prints every thread first ({@link ThreadDumpOnTimeout}).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "management.server.port=0",
        "flotilla.kafka.startup-check-timeout=0",
        "flotilla.gateway.route-deadline.floor=10s",
        "flotilla.gateway.route-deadline.ceiling=10s",
        "flotilla.gateway.router-call-timeout=10s",
        "flotilla.gateway.stream-idle-timeout=45s",
        "flotilla.gateway.max-request-size=64KB",
        "flotilla.gateway.models.tiny-model.max-context=64",
        "flotilla.gateway.models.queue-model.max-in-flight=1",
        "flotilla.gateway.models.queue-model.max-queued=1",
        "flotilla.gateway.models.queue-model.queue-timeout=10m",
        "flotilla.gateway.models.tight-model.max-in-flight=1",
        "flotilla.gateway.models.tight-model.max-queued=1",
        "flotilla.gateway.models.tight-model.queue-timeout=1ms",
        "flotilla.gateway.models.plain-model.tool-parser=none",
        "flotilla.gateway.models.flotilla-sim.reasoning-parser=qwen3",
})
@AutoConfigureWebTestClient(timeout = "60s")
@ExtendWith(ThreadDumpOnTimeout.class)
public abstract class GatewayTestBase {

    protected static final FakeCluster cluster = FakeCluster.get();

    @TestBean
    RequestRecordSink requestRecordSink;

    @Autowired
    protected WebTestClient web;

    @LocalServerPort
    protected int port;

    static RequestRecordSink requestRecordSink() {
        return cluster.records;
    }

    @DynamicPropertySource
    static void router(DynamicPropertyRegistry registry) {
        registry.add("flotilla.gateway.router-address", cluster::routerAddress);
    }

    @BeforeEach
    void resetCluster() {
        cluster.reset();
    }

    protected String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    protected static final Duration WAIT = Duration.ofSeconds(30);
}
