package io.flotilla.worker.agent;

import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.EngineTiming;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.sim.SimEngineConfig;
import io.flotilla.worker.engine.sim.SimulatedEngine;
import io.flotilla.worker.identity.WorkerIdentity;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A pod of a LeaderWorkerSet group reads its rank from the LWS variables; only the leader publishes membership. */
class GroupLayoutTest {

    private static final Map<String, String> LEADER = Map.of("LWS_LEADER_ADDRESS", "worker-multinode-2.worker-multinode.flotilla",
            "LWS_GROUP_SIZE", "4", "LWS_WORKER_INDEX", "0");

    @Test
    void theLayoutComesFromTheLwsVariables() {
        assertThat(GroupLayout.fromEnvironment(Map.of())).isEmpty();
        GroupLayout leader = GroupLayout.fromEnvironment(LEADER).orElseThrow();
        assertThat(leader).isEqualTo(new GroupLayout("worker-multinode-2", 0, 4,
                "worker-multinode-2.worker-multinode.flotilla"));
        assertThat(leader.leader()).isTrue();
        GroupLayout rank3 = GroupLayout.fromEnvironment(Map.of("LWS_LEADER_ADDRESS", "worker-multinode-2.worker-multinode.flotilla",
                "LWS_GROUP_SIZE", "4", "LWS_WORKER_INDEX", "3")).orElseThrow();
        assertThat(rank3.groupId()).isEqualTo("worker-multinode-2");
        assertThat(rank3.leader()).isFalse();
    }

    @Test
    void aPartialOrInconsistentLayoutFailsTheStartNamingTheVariable() {
        assertThatThrownBy(() -> GroupLayout.fromEnvironment(Map.of("LWS_GROUP_SIZE", "4")))
                .hasMessageContaining("missing LWS_LEADER_ADDRESS, LWS_WORKER_INDEX");
        assertThatThrownBy(() -> GroupLayout.fromEnvironment(Map.of("LWS_LEADER_ADDRESS", "g-0", "LWS_GROUP_SIZE", "four",
                "LWS_WORKER_INDEX", "0"))).hasMessageContaining("LWS_GROUP_SIZE must be an integer");
        assertThatThrownBy(() -> GroupLayout.fromEnvironment(Map.of("LWS_LEADER_ADDRESS", "g-0", "LWS_GROUP_SIZE", "2",
                "LWS_WORKER_INDEX", "2"))).hasMessageContaining("LWS_WORKER_INDEX=2");
    }

    @Test
    void theLeaderAdvertisesTheGroupAndTheOtherRanksPublishNothing() {
        try (SimulatedEngine engine = SimulatedEngine.startRealTime(SimEngineConfig.builder().kvBytesPerBlock(0).build(),
                EngineListeners.NONE, "group-1")) {
            MockProducer<String, Object> sent = new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]);
            StatusReporter leader = reporter(engine, sent, GroupLayout.fromEnvironment(LEADER));
            leader.heartbeat();
            leader.reportLoad();
            assertThat(sent.history()).hasSize(2);
            WorkerStatus status = (WorkerStatus) sent.history().get(0).value();
            assertThat(status.getGroup().getGroupId()).isEqualTo("worker-multinode-2");
            assertThat(status.getGroup().getSize()).isEqualTo(4);
            assertThat(status.getGroup().getRank()).isZero();

            sent.clear();
            StatusReporter rank1 = reporter(engine, sent, Optional.of(new GroupLayout("worker-multinode-2", 1, 4,
                    "worker-multinode-2.worker-multinode.flotilla")));
            rank1.heartbeat();
            rank1.reportLoad();
            rank1.publishStopped(100);
            assertThat(sent.history()).isEmpty();

            StatusReporter single = reporter(engine, sent, Optional.empty());
            single.heartbeat();
            assertThat(((WorkerStatus) sent.history().get(0).value()).hasGroup()).isFalse();
        }
    }

    private static StatusReporter reporter(SimulatedEngine engine, MockProducer<String, Object> producer,
                                           Optional<GroupLayout> group) {
        WorkerIdentity id = new WorkerIdentity("worker-multinode-2", 7, WorkerRole.WORKER_ROLE_AGGREGATED,
                KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16, "h:1", "h:2", "h:3");
        return new StatusReporter(id, engine, producer, Clock.systemUTC(), 3000,
                Advertisement.simulated(WorkerCapacity.newBuilder().setTotalKvBlocks(64).build(), EngineTiming.getDefaultInstance()),
                new StatusReporter.Registration("builtin:cl100k_base", "sim", group));
    }
}
