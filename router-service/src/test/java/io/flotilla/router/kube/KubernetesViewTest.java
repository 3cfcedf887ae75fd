package io.flotilla.router.kube;

import io.flotilla.router.core.RouterDefaults;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.cluster.WorkerDirectory;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.Strategy;
import io.flotilla.router.core.WorkerView;
import io.flotilla.router.service.RequestRouter;
import io.flotilla.router.service.RouterMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The router's Kubernetes views against the fabric8 mock API server in CRUD mode: worker pods checked against
 * Kafka leases, and the runtime ConfigMap. Informer events arrive on the client's threads, so the test waits for
 * the state it expects (no timing is asserted).
 */
class KubernetesViewTest {

    private static final String NS = "flotilla";
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final CrudApiServer api = new CrudApiServer();
    private final KubernetesClient client = api.client();

    private IndexerClient indexer;
    private RequestRouter router;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private AutoCloseable watch;

    @BeforeEach
    void setUp() {
        indexer = new IndexerClient("127.0.0.1:1", Duration.ofMillis(50));
        RouterConfig config = RouterDefaults.config().withStrategy(Strategy.ROUND_ROBIN);
        router = new RequestRouter(config, new WorkerDirectory(), BookingLedger.create("r", config), indexer,
                new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]),
                new RouterMetrics(new SimpleMeterRegistry()), Clock.systemUTC(), new SplittableRandom(1), "r");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (watch != null) {
            watch.close();
        }
        router.close();
        indexer.close();
        api.close();
    }

    private void pod(String name) {
        client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName(name)
                .addToLabels(WorkerPods.COMPONENT_LABEL, "worker").endMetadata()
                .withNewStatus().withPhase("Running").endStatus().build()).create();
    }

    private void heartbeat(String id) {
        router.onStatus(WorkerStatus.newBuilder().setWorkerId(id).setEpoch(1).setState(WorkerState.WORKER_STATE_READY)
                .setTs(System.currentTimeMillis()).setRole(WorkerRole.WORKER_ROLE_AGGREGATED).setModel("m").setBlockSize(16)
                .setLeaseMs(600_000).setEndpoint(id + ":7100").build());
    }

    private Set<String> routedTo(int requests) {
        Set<String> out = new TreeSet<>();
        for (int i = 0; i < requests; i++) {
            String id = "req-" + System.nanoTime();
            out.add(router.route(RouteRequest.newBuilder().setRequestId(id).setModel("m").setIsl(64).setBlockSize(16).build())
                    .getWorkerId());
            router.release(id);
        }
        return out;
    }

    private Set<String> candidates() {
        Set<String> out = new TreeSet<>();
        router.directory().views().stream().map(WorkerView::id).forEach(out::add);
        return out;
    }

    @Test
    void aWorkerWhosePodIsGoneLeavesRoutingBeforeItsLeaseLapsesAndComesBackWithANewPod() throws Exception {
        pod("worker-a");
        pod("worker-b");
        heartbeat("worker-a");
        heartbeat("worker-b");
        watch = new WorkerPods(client, NS, router::podsPresent).start(20);
        assertThat(routedTo(4)).containsExactly("worker-a", "worker-b");

        client.pods().inNamespace(NS).withName("worker-b").delete(); // its lease (10 min) has not lapsed

        await().atMost(WAIT).until(() -> candidates().equals(Set.of("worker-a")));
        assertThat(routedTo(4)).containsExactly("worker-a");
        assertThat(router.directory().withoutPod()).isEqualTo(1);
        heartbeat("worker-b"); // a heartbeat it sent before it went, read late
        assertThat(routedTo(4)).containsExactly("worker-a");

        pod("worker-b"); // a new pod of that name
        await().atMost(WAIT).until(() -> candidates().equals(Set.of("worker-a", "worker-b")));
        assertThat(router.directory().withoutPod()).isZero();
    }

    @Test
    void workersWithoutAPodAtStartAreNotRoutedAndAFailedPodCountsAsGone() throws Exception {
        pod("worker-a");
        pod("worker-b");
        heartbeat("worker-a");
        heartbeat("worker-b");
        heartbeat("worker-stale"); // in membership, no pod
        watch = new WorkerPods(client, NS, router::podsPresent).start(20);
        assertThat(candidates()).containsExactly("worker-a", "worker-b");

        client.pods().inNamespace(NS).withName("worker-a").editStatus(p -> new PodBuilder(p).editStatus().withPhase("Failed")
                .endStatus().build());
        await().atMost(WAIT).until(() -> candidates().equals(Set.of("worker-b")));
    }

    @Test
    void aChangedConfigMapChangesTheRouterModeAndWeightsAndABadVersionIsRefusedWhole() throws Exception {
        client.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName("flotilla-router-runtime")
                .endMetadata().addToData("mode", "load").build()).create();
        watch = new RuntimeConfigMap(client, NS, "flotilla-router-runtime", router, registry).start(20);
        // in force when start returns (the informer's handler may see the first list later; it is not applied twice)
        assertThat(router.mode()).isEqualTo(Strategy.LOAD);
        assertThat(registry.get("flotilla.router.runtime_config").tag("outcome", "applied").counter().count()).isEqualTo(1);

        client.configMaps().inNamespace(NS).withName("flotilla-router-runtime").edit(cm -> new ConfigMapBuilder(cm)
                .withData(Map.of("mode", "round-robin", "weights.queue", "2.5")).build());
        await().atMost(WAIT).until(() -> router.mode() == Strategy.ROUND_ROBIN);
        assertThat(router.config().weights()).isEqualTo(new RouterConfig.Weights(1, 1, 2.5));

        client.configMaps().inNamespace(NS).withName("flotilla-router-runtime").edit(cm -> new ConfigMapBuilder(cm)
                .withData(Map.of("mode", "load", "weight-prefil", "3")).build());
        await().atMost(WAIT).until(() -> registry.get("flotilla.router.runtime_config").tag("outcome", "rejected")
                .counter().count() == 1);
        assertThat(router.mode()).isEqualTo(Strategy.ROUND_ROBIN); // nothing of the refused version applied
        assertThat(registry.get("flotilla.router.runtime_config").tag("outcome", "applied").counter().count()).isEqualTo(2);
    }
}
