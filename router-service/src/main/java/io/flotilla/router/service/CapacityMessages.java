package io.flotilla.router.service;

import io.flotilla.router.wire.ProtoMapping;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.WorkerHeadroom;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.core.Capacity;
import io.flotilla.router.core.WorkerView;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** The wire form of the router's views: {@code WorkerInfo} (ListWorkers) and {@code ModelCapacity} (WatchCapacity). */
final class CapacityMessages {

    private CapacityMessages() {
    }

    /** {@code status} is the worker's last membership record (its namespace and capacity source); null when unknown. */
    static WorkerInfo info(WorkerView w, WorkerStatus status) {
        return WorkerInfo.newBuilder().setWorkerId(w.id()).setModel(w.model()).setRole(ProtoMapping.role(w.role()))
                .setState(ProtoMapping.state(w.state()))
                .setEndpoint(w.endpoint()).setBlockSize(w.blockSize()).setRoutable(w.acceptsRequests())
                .setKvLayout(w.kvLayout()).setCapacityBlocks(w.totalKvBlocks())
                .setTokenizerId(status == null ? "" : status.getTokenizerId())
                .setTokenizerSource(status == null ? "" : status.getTokenizerSource())
                .setCapacitySource(status == null ? "" : status.getCapacitySource())
                .setCapabilities(status == null ? EngineCapabilities.getDefaultInstance() : status.getCapabilities())
                .addAllAdapters(new java.util.TreeSet<>(w.adapters().available()))
                .setTenantIsolation(ProtoMapping.isolation(w.isolation()))
                .build();
    }

    /** Counts above the uint32 range saturate; {@code statuses} gives each worker's last membership record. */
    static List<ModelCapacity> models(List<Capacity> capacity, Function<String, WorkerStatus> statuses) {
        List<ModelCapacity> out = new ArrayList<>(capacity.size());
        for (Capacity c : capacity) {
            ModelCapacity.Builder m = ModelCapacity.newBuilder().setModel(c.model()).setSaturated(c.saturated())
                    .setFreeWorkers(c.freeWorkers());
            for (Capacity.Headroom h : c.workers()) {
                WorkerView w = h.worker();
                m.addWorkers(WorkerHeadroom.newBuilder().setInfo(info(w, statuses.apply(w.id()))).setBusy(h.busy())
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
