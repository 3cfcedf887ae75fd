package io.flotilla.router.service;

import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.WorkerHeadroom;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.router.core.Capacity;
import io.flotilla.router.core.WorkerView;

import java.util.ArrayList;
import java.util.List;

/** The wire form of the router's views: {@code WorkerInfo} (ListWorkers) and {@code ModelCapacity} (WatchCapacity). */
final class CapacityMessages {

    private CapacityMessages() {
    }

    static WorkerInfo info(WorkerView w) {
        return WorkerInfo.newBuilder().setWorkerId(w.id()).setModel(w.model()).setRole(w.role()).setState(w.state())
                .setEndpoint(w.endpoint()).setBlockSize(w.blockSize()).setRoutable(w.acceptsRequests()).build();
    }

    /** Counts above the uint32 range saturate. */
    static List<ModelCapacity> models(List<Capacity> capacity) {
        List<ModelCapacity> out = new ArrayList<>(capacity.size());
        for (Capacity c : capacity) {
            ModelCapacity.Builder m = ModelCapacity.newBuilder().setModel(c.model()).setSaturated(c.saturated())
                    .setFreeWorkers(c.freeWorkers());
            for (Capacity.Headroom h : c.workers()) {
                WorkerView w = h.worker();
                m.addWorkers(WorkerHeadroom.newBuilder().setInfo(info(w)).setBusy(h.busy())
                        .setActiveBlocks(uint32(h.activeBlocks())).setCapacityBlocks(w.totalKvBlocks())
                        .setQueuedPrefillTokens(uint32(h.queuedPrefillTokens()))
                        .setWaitingRequests(h.queuedPrefills()).setRunningRequests(w.load().running()));
            }
            out.add(m.build());
        }
        return out;
    }

    private static int uint32(long v) {
        return (int) Math.min(0xFFFF_FFFFL, Math.max(0, v));
    }
}
