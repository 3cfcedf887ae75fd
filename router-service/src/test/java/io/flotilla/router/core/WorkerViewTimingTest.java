package io.flotilla.router.core;

import io.flotilla.router.wire.ProtoMapping;
import io.flotilla.protocol.v1.EngineTiming;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Where a worker's timing comes from: the simulator's status, a real engine's learned load report, or nowhere. */
class WorkerViewTimingTest {

    private static WorkerStatus.Builder status() {
        return WorkerStatus.newBuilder().setWorkerId("w").setEpoch(1).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                .setModel("m").setBlockSize(16).setState(WorkerState.WORKER_STATE_READY)
                .setCapacity(WorkerCapacity.newBuilder().setTotalKvBlocks(2000));
    }

    private static final EngineTiming LEARNED = EngineTiming.newBuilder().setPrefillB(0.05).setPrefillC(12)
            .setDecodeD1(6).setDecodeD0(9).setSpeedup(1).build();

    @Test
    void aRealEngineWithoutLearnedTimingIsPricedInBlocks() {
        WorkerView v = ProtoMapping.workerView(status().build(), WorkerLoad.newBuilder().setWorkerId("w").setEpoch(1).build(), true);
        assertThat(v.timing()).isEmpty();
        assertThat(v.totalKvBlocks()).isEqualTo(2000);
        Candidate c = new Candidate(v, 0, 0, 100, 0, 0, 0, 0);
        assertThat(CostUnit.of(List.of(c))).as("load-only costs while unlearned").isEqualTo(CostUnit.BLOCKS);
    }

    @Test
    void learnedTimingFromTheLoadReportPricesInMilliseconds() {
        WorkerLoad load = WorkerLoad.newBuilder().setWorkerId("w").setEpoch(1).setLearnedTiming(LEARNED)
                .setPrefillSamples(40).setDecodeSamples(90).build();
        WorkerView v = ProtoMapping.workerView(status().build(), load, true);
        assertThat(v.timing()).hasValueSatisfying(t -> {
            assertThat(t.prefillMs(1000)).isEqualTo(62.0);
            assertThat(t.decodeMs(0.5)).isEqualTo(12.0);
        });
        assertThat(CostUnit.of(List.of(new Candidate(v, 0, 0, 100, 0, 0, 0, 0)))).isEqualTo(CostUnit.MILLISECONDS);
    }

    @Test
    void theStatussTimingWinsForTheSimulator() {
        EngineTiming sim = EngineTiming.newBuilder().setPrefillB(1).setDecodeD0(2).setSpeedup(1).build();
        WorkerView v = ProtoMapping.workerView(status().setTiming(sim).build(),
                WorkerLoad.newBuilder().setWorkerId("w").setEpoch(1).setLearnedTiming(LEARNED).build(), true);
        assertThat(v.timing()).hasValueSatisfying(t -> assertThat(t.prefillB()).isEqualTo(1));
    }
}
