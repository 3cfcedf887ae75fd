package io.flotilla.gateway.routing;

import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.protocol.v1.WorkerHeadroom;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The gateway's own worker choice: eligibility, then busy, load since the last push, KV use. */
class FallbackPickerTest {

    private static WorkerHeadroom.Builder worker(String id, WorkerRole role, int blockSize, boolean routable) {
        return WorkerHeadroom.newBuilder().setCapacityBlocks(1000).setInfo(WorkerInfo.newBuilder().setWorkerId(id)
                .setModel("m").setRole(role).setState(WorkerState.WORKER_STATE_READY).setEndpoint(id + ":1")
                .setBlockSize(blockSize).setRoutable(routable));
    }

    private static FleetView fleet(WorkerHeadroom.Builder... workers) {
        ModelCapacity.Builder m = ModelCapacity.newBuilder().setModel("m");
        for (WorkerHeadroom.Builder w : workers) {
            m.addWorkers(w);
        }
        FleetView fleet = new FleetView();
        fleet.update(CapacityUpdate.newBuilder().addModels(m).build());
        return fleet;
    }

    private static String pick(FleetView fleet, Set<String> exclude) {
        return new FallbackPicker(fleet).pick("m", 16, KvScope.SHARED, exclude).map(WorkerInfo::getWorkerId).orElse("none");
    }

    @Test
    void onlyReadyRoutableServingWorkersOfTheBlockSizeAreCandidates() {
        FleetView fleet = fleet(worker("prefill", WorkerRole.WORKER_ROLE_PREFILL, 16, true),
                worker("unroutable", WorkerRole.WORKER_ROLE_AGGREGATED, 16, false),
                worker("bs32", WorkerRole.WORKER_ROLE_AGGREGATED, 32, true),
                worker("decode", WorkerRole.WORKER_ROLE_DECODE, 16, true).setRunningRequests(50));
        assertThat(pick(fleet, Set.of())).isEqualTo("decode");
        assertThat(pick(fleet, Set.of("decode"))).isEqualTo("none");
        assertThat(new FallbackPicker(fleet).pick("other-model", 16, KvScope.SHARED, Set.of())).isEmpty();
    }

    @Test
    void theLeastLoadedWinsAndBusyOnlyWhenAllAre() {
        FleetView fleet = fleet(worker("a", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true).setRunningRequests(3).setWaitingRequests(2),
                worker("b", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true).setRunningRequests(4),
                worker("c", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true).setBusy(true));
        assertThat(pick(fleet, Set.of())).isEqualTo("b");
        assertThat(pick(fleet, Set.of("a", "b"))).isEqualTo("c");
    }

    @Test
    void theGatewaysOwnRequestsSinceThePushCount() {
        FleetView fleet = fleet(worker("a", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true).setRunningRequests(1),
                worker("b", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true).setRunningRequests(2));
        assertThat(pick(fleet, Set.of())).isEqualTo("a");
        fleet.started("a");
        fleet.started("a"); // two more on a since the push: a counts 3, b 2
        assertThat(pick(fleet, Set.of())).isEqualTo("b");
        fleet.ended("a");
        fleet.ended("a");
        assertThat(pick(fleet, Set.of())).isEqualTo("a");
    }

    @Test
    void equalWorkersShareABurstByRotation() {
        FleetView fleet = fleet(worker("a", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true),
                worker("b", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true));
        FallbackPicker picker = new FallbackPicker(fleet);
        List<String> picks = java.util.stream.IntStream.range(0, 4)
                .mapToObj(i -> picker.pick("m", 16, KvScope.SHARED, Set.of()).orElseThrow().getWorkerId()).toList();
        assertThat(picks).containsExactlyInAnyOrder("a", "a", "b", "b");
    }

    @Test
    void anAdapterRequestNeedsAWorkerWithTheAdapterAndASaltedOneAWorkerThatIsolatesTenants() {
        WorkerHeadroom.Builder plain = worker("plain", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true);
        WorkerHeadroom.Builder lora = worker("lora", WorkerRole.WORKER_ROLE_AGGREGATED, 16, true).setRunningRequests(9);
        lora.getInfoBuilder().addAdapters("sql").setTenantIsolation(TenantIsolation.TENANT_ISOLATION_SALT_ALL_BLOCKS);
        FallbackPicker picker = new FallbackPicker(fleet(plain, lora));
        assertThat(picker.pick("m", 16, KvScope.SHARED, Set.of()).orElseThrow().getWorkerId()).isEqualTo("plain");
        assertThat(picker.pick("m", 16, KvScope.lora("sql"), Set.of()).orElseThrow().getWorkerId()).isEqualTo("lora");
        assertThat(picker.pick("m", 16, KvScope.lora("chat"), Set.of())).isEmpty();
        assertThat(picker.pick("m", 16, new KvScope("", "fs1:00", 0), Set.of()).orElseThrow().getWorkerId())
                .isEqualTo("lora");
    }
}
