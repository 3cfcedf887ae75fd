package io.flotilla.planner.connector;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.FleetWorker;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.protocol.v1.WorkerState;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Multi-pod instances (LeaderWorkerSet groups of one leader and three ranks) scaled by the kubernetes connector, against
 * the fabric8 mock API server in CRUD mode. The mock has no LeaderWorkerSet controller: the test creates the pods the
 * controller would and checks what the connector asks of the API.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesGroupsTest {

    private static final String NS = "flotilla";
    private static final String SET = "worker-multinode";
    private static final int SIZE = 4;

    KubernetesClient client;

    private final Map<String, CompletableFuture<Integer>> drains = new LinkedHashMap<>();
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final MutableClock clock = new MutableClock();
    private KubernetesConnector connector;

    /** A clock the test moves. */
    static final class MutableClock extends Clock {
        Instant now = Instant.parse("2026-01-01T00:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @BeforeEach
    void setUp() {
        client.genericKubernetesResources(WorkerGroups.LWS).inNamespace(NS).resource(new GenericKubernetesResourceBuilder()
                .withApiVersion("leaderworkerset.x-k8s.io/v1").withKind("LeaderWorkerSet")
                .withNewMetadata().withName(SET).addToLabels("flotilla.io/component", "worker")
                .addToLabels("flotilla.io/role", "aggregated").endMetadata()
                .addToAdditionalProperties("spec", Map.of("replicas", 2, "leaderWorkerTemplate", Map.of("size", SIZE)))
                .build()).create();
        for (int g = 0; g < 2; g++) {
            group(g, SIZE);
        }
        DrainClient fake = (endpoint, deadline) -> drains.computeIfAbsent(endpoint, e -> new CompletableFuture<>());
        connector = new KubernetesConnector(client, NS, fake, Duration.ofSeconds(60), Runnable::run, () -> true, clock,
                Duration.ofMinutes(10), registry);
    }

    /** Group g's pods as the LeaderWorkerSet controller names and labels them; the first {@code ready} of them Ready. */
    private void group(int g, int ready) {
        for (int rank = 0; rank < SIZE; rank++) {
            String name = rank == 0 ? SET + "-" + g : SET + "-" + g + "-" + rank;
            client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName(name)
                    .addToLabels(WorkerGroups.SET_LABEL, SET).addToLabels(WorkerGroups.GROUP_INDEX, Integer.toString(g))
                    .addToLabels(WorkerGroups.WORKER_INDEX, Integer.toString(rank)).endMetadata()
                    .withNewStatus().addNewCondition().withType("Ready").withStatus(rank < ready ? "True" : "False").endCondition()
                    .endStatus().build()).create();
        }
    }

    private GenericKubernetesResource set() {
        return client.genericKubernetesResources(WorkerGroups.LWS).inNamespace(NS).withName(SET).get();
    }

    private List<String> pods() {
        return client.pods().inNamespace(NS).list().getItems().stream().map(p -> p.getMetadata().getName()).sorted().toList();
    }

    /** Membership holds the leaders only: one routable worker per group. */
    private static Fleet leaders(int... groups) {
        List<FleetWorker> w = new ArrayList<>();
        for (int g : groups) {
            w.add(new FleetWorker(SET + "-" + g, Pool.AGGREGATED, WorkerState.WORKER_STATE_READY, SET + "-" + g + ":7100", 0, 0));
        }
        return new Fleet(w);
    }

    private double whole() {
        return registry.get("flotilla.planner.whole_groups").tag("pool", "aggregated").gauge().value();
    }

    @Test
    void scalesGroupsAndCountsAGroupWholeOnlyWhenEveryRankIsReady() {
        assertThat(connector.observe(leaders(0, 1)).current()).isEqualTo(PoolCounts.of(Pool.AGGREGATED, 2));
        assertThat(whole()).isEqualTo(2);

        connector.apply(PoolCounts.of(Pool.AGGREGATED, 3), leaders(0, 1));
        assertThat(WorkerGroups.replicas(set())).isEqualTo(3);
        assertThat(set().getMetadata().getAnnotations()).containsEntry(KubernetesConnector.APPLIED_ANNOTATION, "3");

        group(2, 3); // the controller's new group: three of four pods Ready so far
        ConnectorView view = connector.observe(leaders(0, 1, 2));
        assertThat(view.current().get(Pool.AGGREGATED)).isEqualTo(3);
        assertThat(whole()).isEqualTo(2);
        assertThat(view.notWhole()).containsExactly(SET + "-2"); // its leader registered, but the instance is not ready
        Fleet planned = leaders(0, 1, 2).starting(view.notWhole());
        assertThat(planned.ready().get(Pool.AGGREGATED)).isEqualTo(2);
        assertThat(planned.get(SET + "-2").orElseThrow().live()).isTrue(); // still part of the pool, drained on scale-down
        client.pods().inNamespace(NS).withName(SET + "-2-3").edit(p -> new PodBuilder(p).editStatus().editFirstCondition()
                .withStatus("True").endCondition().endStatus().build());
        assertThat(connector.observe(leaders(0, 1, 2)).notWhole()).isEmpty();
        assertThat(whole()).isEqualTo(3);
        assertThat(drains).isEmpty();
    }

    @Test
    void scaleDownDrainsTheLeaderOfTheGroupThatGoesAndRemovesItAsOne() {
        connector.apply(PoolCounts.of(Pool.AGGREGATED, 1), leaders(0, 1));

        assertThat(drains).containsOnlyKeys(SET + "-1:7100"); // the controller deletes the highest group index
        assertThat(WorkerGroups.replicas(set())).isEqualTo(2); // not before the leader drained
        assertThat(connector.observe(leaders(0, 1)).current().get(Pool.AGGREGATED)).isEqualTo(1);

        drains.get(SET + "-1:7100").complete(0);

        assertThat(WorkerGroups.replicas(set())).isEqualTo(1); // the whole group goes with its leader
        assertThat(set().getMetadata().getAnnotations()).containsEntry(KubernetesConnector.APPLIED_ANNOTATION, "1");
        assertThat(connector.observe(leaders(0)).changedByHand()).isEmpty();
    }

    @Test
    void aGroupWithARankThatNeverBecomesReadyIsRemovedWholeAfterTheDeadline() {
        connector.apply(PoolCounts.of(Pool.AGGREGATED, 3), leaders(0, 1));
        group(2, SIZE - 1); // rank 3 of group 2 never becomes Ready

        connector.observe(leaders(0, 1));
        connector.apply(PoolCounts.of(Pool.AGGREGATED, 3), leaders(0, 1));
        clock.now = clock.now.plus(Duration.ofMinutes(9));
        connector.observe(leaders(0, 1));
        connector.apply(PoolCounts.of(Pool.AGGREGATED, 3), leaders(0, 1));
        assertThat(pods()).contains(SET + "-2", SET + "-2-1", SET + "-2-2", SET + "-2-3"); // still within its deadline

        clock.now = clock.now.plus(Duration.ofMinutes(1));
        connector.observe(leaders(0, 1));
        connector.apply(PoolCounts.of(Pool.AGGREGATED, 3), leaders(0, 1));

        assertThat(pods()).noneMatch(name -> name.startsWith(SET + "-2")); // every rank, not only the late one
        assertThat(pods()).hasSize(2 * SIZE);                              // the whole groups are untouched
        assertThat(WorkerGroups.replicas(set())).isEqualTo(3);              // the controller recreates group 2
        assertThat(registry.get("flotilla.planner.partial_groups").tag("pool", "aggregated").counter().count()).isEqualTo(1);
        assertThat(drains).isEmpty(); // its leader never joined membership

        group(2, SIZE); // recreated, and whole this time
        clock.now = clock.now.plus(Duration.ofMinutes(30));
        connector.observe(leaders(0, 1, 2));
        connector.apply(PoolCounts.of(Pool.AGGREGATED, 3), leaders(0, 1, 2));
        assertThat(pods()).hasSize(3 * SIZE);
        assertThat(whole()).isEqualTo(3);
    }

    @Test
    void aPartialGroupWhoseLeaderIsLiveIsDrainedBeforeItIsRemoved() {
        Pod rank = client.pods().inNamespace(NS).withName(SET + "-1-2").get();
        client.pods().inNamespace(NS).resource(new PodBuilder(rank).editStatus().editFirstCondition().withStatus("False")
                .endCondition().endStatus().build()).update(); // a rank of a serving group stops being Ready
        connector.observe(leaders(0, 1));
        clock.now = clock.now.plus(Duration.ofMinutes(10));
        connector.observe(leaders(0, 1));
        connector.apply(PoolCounts.of(Pool.AGGREGATED, 2), leaders(0, 1));

        assertThat(drains).containsOnlyKeys(SET + "-1:7100");
        assertThat(pods()).contains(SET + "-1"); // not before its leader drained
        connector.apply(PoolCounts.of(Pool.AGGREGATED, 2), leaders(0, 1));
        assertThat(drains).hasSize(1); // one drain, however many ticks it takes

        drains.get(SET + "-1:7100").complete(0);
        assertThat(pods()).noneMatch(name -> name.startsWith(SET + "-1"));
        assertThat(registry.get("flotilla.planner.partial_groups").tag("pool", "aggregated").counter().count()).isEqualTo(1);
    }
}
