package io.flotilla.router.core;

import io.flotilla.router.wire.ProtoMapping;
import io.flotilla.protocol.v1.EmbeddingCapability;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import static io.flotilla.router.core.Fixtures.BS;
import static io.flotilla.router.core.Fixtures.MODEL;
import static io.flotilla.router.core.Fixtures.SIMPLE;
import static io.flotilla.router.core.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

/** Embedding requests go only to workers that embed, by load: they bring no KV to match. */
class EmbeddingRoutingTest {

    private static final RoutingPolicy KV = new RoutingPolicy(RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER),
            new Random(1));

    private static WorkerView worker(String id, boolean embeds, LoadReport load) {
        return new WorkerView(id, WorkerView.Role.AGGREGATED, MODEL, BS, "bf16/bs16/paged", id + ":7100",
                WorkerView.State.READY, true, Optional.of(SIMPLE), 1000, load, KvTierLinks.NONE,
                WorkerAdapters.NONE, WorkerView.Isolation.NONE, embeds);
    }

    private static RoutingRequest embedding(int isl) {
        return ProtoMapping.request(RouteRequest.newBuilder().setRequestId("e").setModel(MODEL).setIsl(isl)
                .setBlockSize(BS).setEmbed(true).build());
    }

    @Test
    void onlyWorkersThatEmbedAreCandidatesAndTheLeastLoadedWins() {
        List<WorkerView> workers = List.of(worker("generator", false, LoadReport.NONE),
                worker("busy-embedder", true, Fixtures.load(4, 4096, 600)),
                worker("idle-embedder", true, LoadReport.NONE));
        // the generator holds a long cached prefix: nothing an embedding could use
        Decision d = KV.decide(embedding(512), snapshot(workers, Map.of("generator", 32)));
        assertThat(d.outcome()).isEqualTo(Decision.Outcome.ROUTED);
        assertThat(d.workerId()).isEqualTo("idle-embedder");
        assertThat(d.scores()).containsOnlyKeys("busy-embedder", "idle-embedder");
        assertThat(d.overlapBlocks()).isZero();

        assertThat(KV.decide(embedding(512), snapshot(List.of(worker("generator", false, LoadReport.NONE)), Map.of()))
                .outcome()).isEqualTo(Decision.Outcome.NO_WORKER);
        // a generation runs on any of them
        RoutingRequest generation = new RoutingRequest("g", MODEL, 512, BS, Fixtures.chain(3, 32), Set.of(), false, 16);
        assertThat(KV.decide(generation, snapshot(workers, Map.of())).scores()).hasSize(3);
    }

    @Test
    void aWorkerEmbedsWhenItsAdvertisedCapabilitiesCarryAnEmbedding() {
        WorkerStatus.Builder status = WorkerStatus.newBuilder().setWorkerId("w").setModel(MODEL).setBlockSize(BS)
                .setState(WorkerState.WORKER_STATE_READY);
        assertThat(ProtoMapping.workerView(status.build(), null, true).embeds()).isFalse();
        assertThat(ProtoMapping.workerView(status.setCapabilities(EngineCapabilities.newBuilder()
                .setEmbedding(EmbeddingCapability.newBuilder().setDimensions(256))).build(), null, true).embeds()).isTrue();
    }
}
