package io.flotilla.planner.connector;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.FleetWorker;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.protocol.v1.WorkerState;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** The kubernetes connector against the fabric8 mock API server in CRUD mode. */
@EnableKubernetesMockClient(crud = true)
class KubernetesConnectorTest {

    private static final String NS = "flotilla";

    KubernetesClient client;

    private final Map<String, CompletableFuture<Integer>> drains = new LinkedHashMap<>();
    private KubernetesConnector connector;

    @BeforeEach
    void setUp() {
        deployment("worker-prefill", "prefill", 1);
        deployment("worker-decode", "decode", 3);
        for (String[] p : new String[][] {{"worker-decode-a", "2026-01-01T00:00:00Z"}, {"worker-decode-b", "2026-01-01T00:01:00Z"},
                {"worker-decode-c", "2026-01-01T00:02:00Z"}}) {
            client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName(p[0])
                    .withCreationTimestamp(p[1]).addToLabels("app.kubernetes.io/name", "worker-decode")
                    .addToLabels("flotilla.io/component", "worker").addToLabels("flotilla.io/role", "decode").endMetadata()
                    .withNewStatus().addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus()
                    .build()).create();
        }
        DrainClient fake = (endpoint, deadline) -> drains.computeIfAbsent(endpoint, e -> new CompletableFuture<>());
        connector = new KubernetesConnector(client, NS, fake, Duration.ofSeconds(60), Runnable::run);
    }

    private void deployment(String name, String role, int replicas) {
        client.apps().deployments().inNamespace(NS).resource(new DeploymentBuilder()
                .withNewMetadata().withName(name).addToLabels("app.kubernetes.io/name", name)
                .addToLabels("flotilla.io/component", "worker").addToLabels("flotilla.io/role", role).endMetadata()
                .withNewSpec().withReplicas(replicas)
                .withNewSelector().addToMatchLabels("app.kubernetes.io/name", name).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app.kubernetes.io/name", name).endMetadata()
                .withNewSpec().addNewContainer().withName(name).withImage("flotilla/worker-agent:latest").endContainer().endSpec()
                .endTemplate().endSpec().build()).create();
    }

    private int replicas(String name) {
        return client.apps().deployments().inNamespace(NS).withName(name).get().getSpec().getReplicas();
    }

    private Deployment get(String name) {
        return client.apps().deployments().inNamespace(NS).withName(name).get();
    }

    private static Fleet decodeFleet() {
        List<FleetWorker> w = new ArrayList<>();
        for (String id : List.of("worker-decode-a", "worker-decode-b", "worker-decode-c")) {
            w.add(new FleetWorker(id, Pool.DECODE, WorkerState.WORKER_STATE_READY, id + ":7100", 0, 0));
        }
        return new Fleet(w);
    }

    @Test
    void scalesUpByPatchingReplicasAndRecordingWhatItSet() {
        assertThat(connector.observe(Fleet.EMPTY).current()).isEqualTo(PoolCounts.of(Pool.PREFILL, 1, Pool.DECODE, 3));
        assertThat(connector.observe(Fleet.EMPTY).changedByHand()).isEmpty(); // no annotation yet: adopted, not reported

        PoolCounts applied = connector.apply(PoolCounts.of(Pool.PREFILL, 3, Pool.DECODE, 3), decodeFleet()).orElseThrow();

        assertThat(applied).isEqualTo(PoolCounts.of(Pool.PREFILL, 3, Pool.DECODE, 3));
        assertThat(replicas("worker-prefill")).isEqualTo(3);
        assertThat(get("worker-prefill").getMetadata().getAnnotations()).containsEntry(KubernetesConnector.APPLIED_ANNOTATION, "3");
        assertThat(replicas("worker-decode")).isEqualTo(3);
        assertThat(get("worker-decode").getMetadata().getAnnotations()).containsEntry(KubernetesConnector.APPLIED_ANNOTATION, "3");
        assertThat(drains).isEmpty();
        assertThat(connector.observe(Fleet.EMPTY).changedByHand()).isEmpty();
    }

    @Test
    void scaleDownDrainsTheNewestWorkerFirstAndLowersReplicasOnlyAfterwards() {
        connector.apply(PoolCounts.of(Pool.DECODE, 2), decodeFleet());

        assertThat(drains).containsOnlyKeys("worker-decode-c:7100"); // the ReplicaSet deletes the newest pod first
        assertThat(replicas("worker-decode")).isEqualTo(3);          // not before the drain finished
        Pod victim = client.pods().inNamespace(NS).withName("worker-decode-c").get();
        assertThat(victim.getMetadata().getAnnotations()).containsEntry(KubernetesConnector.DELETION_COST, KubernetesConnector.VICTIM_COST);
        var pending = connector.observe(decodeFleet());
        assertThat(pending.current().get(Pool.DECODE)).isEqualTo(2);
        assertThat(pending.changedByHand()).isEmpty();

        drains.get("worker-decode-c:7100").complete(0);

        assertThat(replicas("worker-decode")).isEqualTo(2);
        assertThat(get("worker-decode").getMetadata().getAnnotations()).containsEntry(KubernetesConnector.APPLIED_ANNOTATION, "2");
    }

    @Test
    void podsWhoseWorkerIsAlreadyGoneAreRemovedWithoutDraining() {
        Fleet onlyAandB = new Fleet(decodeFleet().workers().subList(0, 2)); // worker-decode-c is not in membership
        connector.apply(PoolCounts.of(Pool.DECODE, 2), onlyAandB);
        assertThat(drains).isEmpty();
        assertThat(replicas("worker-decode")).isEqualTo(2);
    }

    @Test
    void aFailedDrainAbandonsTheScaleDownAndANewerDecisionSupersedesAPendingOne() {
        connector.apply(PoolCounts.of(Pool.DECODE, 2), decodeFleet());
        drains.remove("worker-decode-c:7100").completeExceptionally(new IllegalStateException("unreachable"));
        assertThat(replicas("worker-decode")).isEqualTo(3);

        connector.apply(PoolCounts.of(Pool.DECODE, 2), decodeFleet());
        connector.apply(PoolCounts.of(Pool.DECODE, 4), decodeFleet()); // load came back before the drain ended
        assertThat(replicas("worker-decode")).isEqualTo(4);
        drains.get("worker-decode-c:7100").complete(0);
        assertThat(replicas("worker-decode")).isEqualTo(4); // the stale scale-down is not applied
    }

    @Test
    void aManualEditIsReportedAndRespected() {
        connector.apply(PoolCounts.of(Pool.DECODE, 3), decodeFleet());
        // kubectl scale deployment/worker-decode --replicas=5
        client.apps().deployments().inNamespace(NS).withName("worker-decode").edit(d -> new DeploymentBuilder(d)
                .editSpec().withReplicas(5).endSpec().build());

        ConnectorView view = connector.observe(decodeFleet());
        assertThat(view.changedByHand()).containsExactly(Pool.DECODE);
        assertThat(view.current().get(Pool.DECODE)).isEqualTo(5);

        // The planner adopts 5: the annotation follows, replicas stay, no drain.
        connector.apply(PoolCounts.of(Pool.DECODE, 5), decodeFleet());
        assertThat(replicas("worker-decode")).isEqualTo(5);
        assertThat(drains).isEmpty();
        assertThat(connector.observe(decodeFleet()).changedByHand()).isEmpty();
    }

    @Test
    void poolsWithoutADeploymentAreLeftAlone() {
        PoolCounts applied = connector.apply(PoolCounts.of(Pool.AGGREGATED, 2), Fleet.EMPTY).orElseThrow();
        assertThat(applied.has(Pool.AGGREGATED)).isFalse();
        assertThat(connector.observe(Fleet.EMPTY).current().has(Pool.AGGREGATED)).isFalse();
    }

    @Test
    void aScaleDownWhoseDrainsEndAfterLeadershipWasLostIsAbandoned() {
        boolean[] leads = {true};
        DrainClient fake = (endpoint, deadline) -> drains.computeIfAbsent(endpoint, e -> new CompletableFuture<>());
        KubernetesConnector replica = new KubernetesConnector(client, NS, fake, Duration.ofSeconds(60), Runnable::run,
                () -> leads[0]);
        replica.apply(PoolCounts.of(Pool.DECODE, 2), decodeFleet());
        leads[0] = false; // the lease went to another replica while the drain ran

        drains.get("worker-decode-c:7100").complete(0);

        assertThat(replicas("worker-decode")).isEqualTo(3); // the successor decides again
    }
}
