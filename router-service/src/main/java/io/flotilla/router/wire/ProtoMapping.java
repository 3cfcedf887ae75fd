package io.flotilla.router.wire;

import io.flotilla.protocol.v1.AdapterSlots;
import io.flotilla.protocol.v1.EngineTiming;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.KvTierLink;
import io.flotilla.protocol.v1.KvTiers;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RoutingMode;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.core.Decision;
import io.flotilla.router.core.KvTierLinks;
import io.flotilla.router.core.LoadReport;
import io.flotilla.router.core.ModeUsed;
import io.flotilla.router.core.RoutingRequest;
import io.flotilla.router.core.WorkerAdapters;
import io.flotilla.router.core.WorkerTiming;
import io.flotilla.router.core.WorkerView;

import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The protobuf messages the router reads and writes, mapped to and from the routing core's own types; the
 * core imports no protobuf. Enums map by name (a value the core does not know reads as UNSPECIFIED, or NONE
 * for tenant isolation).
 */
public final class ProtoMapping {

    private ProtoMapping() {
    }

    public static RoutingRequest request(RouteRequest r) {
        long[] hashes = new long[r.getSeqHashesCount()];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = r.getSeqHashes(i);
        }
        return new RoutingRequest(r.getRequestId(), r.getModel(), r.getIsl(), r.getBlockSize(), hashes,
                Set.copyOf(r.getExcludeList()), r.getAllowDisagg(), r.getOsl(), r.getLoraName(), r.getTenantSalted(),
                r.getEmbed());
    }

    /** The wire form; a NO_WORKER decision has no wire form the gateway can use (answer UNAVAILABLE). */
    public static RouteDecision decision(Decision d) {
        return RouteDecision.newBuilder()
                .setWorkerId(d.workerId()).setWorkerEndpoint(d.workerEndpoint())
                .setPrefillWorkerId(d.prefillWorkerId()).setPrefillEndpoint(d.prefillEndpoint())
                .setOverlapBlocks(d.overlapBlocks()).setPrefillOverlapBlocks(d.prefillOverlapBlocks())
                .putAllScores(d.scores()).setModeUsed(mode(d.modeUsed()))
                .setBusy(d.outcome() == Decision.Outcome.BUSY)
                .setRetryAfterMs((int) Math.min(Integer.MAX_VALUE, d.retryAfterMs()))
                .build();
    }

    public static RoutingMode mode(ModeUsed m) {
        return switch (m) {
            case KV -> RoutingMode.ROUTING_MODE_KV;
            case KV_APPROX -> RoutingMode.ROUTING_MODE_KV_APPROX;
            case LOAD -> RoutingMode.ROUTING_MODE_LOAD;
            case ROUND_ROBIN -> RoutingMode.ROUTING_MODE_ROUND_ROBIN;
            case RANDOM -> RoutingMode.ROUTING_MODE_RANDOM;
        };
    }

    /**
     * A view from the membership record and the latest load report (null before the first). Capacity comes
     * from the status, or from the load report when the status has none. Timing is the status's (the
     * simulator advertises its model there), else the one the worker learned from its real engine and
     * published with its load report; a real engine without enough samples has none, and is priced by load
     * alone.
     */
    public static WorkerView workerView(WorkerStatus status, WorkerLoad load, boolean routable) {
        int total = status.getCapacity().getTotalKvBlocks();
        if (total == 0 && load != null) {
            total = load.getTotalKvBlocks();
        }
        return new WorkerView(status.getWorkerId(), role(status.getRole()), status.getModel(), status.getBlockSize(),
                status.getKvLayout(), status.getEndpoint(), state(status.getState()), routable,
                timingOf(status, load), total,
                load == null ? LoadReport.NONE : load(load),
                tiers(status.getKvTiers(), status.hasKvTiers()),
                adapters(status.getAdapters(), status.hasAdapters()), isolation(status.getTenantIsolation()),
                status.getCapabilities().hasEmbedding());
    }

    private static Optional<WorkerTiming> timingOf(WorkerStatus status, WorkerLoad load) {
        Optional<WorkerTiming> advertised = timing(status.getTiming(), status.hasTiming());
        if (advertised.isPresent() || load == null) {
            return advertised;
        }
        return timing(load.getLearnedTiming(), load.hasLearnedTiming());
    }

    public static LoadReport load(WorkerLoad l) {
        return new LoadReport(l.getRunning(), l.getWaiting(), l.getWaitingPrefillTokens(), l.getActiveKvBlocks());
    }

    public static KvTierLinks tiers(KvTiers t, boolean present) {
        if (!present || t.getBytesPerBlock() == 0) {
            return KvTierLinks.NONE;
        }
        double host = 0;
        double disk = 0;
        for (KvTierLink l : t.getTiersList()) {
            if (l.getTier() == KvTier.KV_TIER_HOST) {
                host = l.getBytesPerSecond();
            } else if (l.getTier() == KvTier.KV_TIER_DISK) {
                disk = l.getBytesPerSecond();
            }
        }
        return new KvTierLinks(t.getBytesPerBlock(), Math.max(0, host), Math.max(0, disk));
    }

    public static WorkerAdapters adapters(AdapterSlots slots, boolean present) {
        if (!present) {
            return WorkerAdapters.NONE;
        }
        Set<String> available = new HashSet<>(slots.getLoadedList());
        available.addAll(slots.getAvailableList());
        return new WorkerAdapters(Set.copyOf(slots.getLoadedList()), available, slots.getLoadMs(),
                slots.getMaxLoaded());
    }

    /**
     * The advertised coefficients, or empty when the worker advertised none (message absent or every
     * polynomial coefficient zero). A speedup of 0 (proto default) reads as 1.
     */
    public static Optional<WorkerTiming> timing(EngineTiming t, boolean present) {
        if (!present || (t.getPrefillA() == 0 && t.getPrefillB() == 0 && t.getPrefillC() == 0
                && t.getDecodeD2() == 0 && t.getDecodeD1() == 0 && t.getDecodeD0() == 0)) {
            return Optional.empty();
        }
        double speedup = t.getSpeedup() > 0 ? t.getSpeedup() : 1.0;
        return Optional.of(new WorkerTiming(t.getPrefillA(), t.getPrefillB(), t.getPrefillC(),
                t.getDecodeD2(), t.getDecodeD1(), t.getDecodeD0(), speedup));
    }

    public static WorkerView.Role role(WorkerRole r) {
        return switch (r) {
            case WORKER_ROLE_AGGREGATED -> WorkerView.Role.AGGREGATED;
            case WORKER_ROLE_PREFILL -> WorkerView.Role.PREFILL;
            case WORKER_ROLE_DECODE -> WorkerView.Role.DECODE;
            default -> WorkerView.Role.UNSPECIFIED;
        };
    }

    public static WorkerRole role(WorkerView.Role r) {
        return switch (r) {
            case AGGREGATED -> WorkerRole.WORKER_ROLE_AGGREGATED;
            case PREFILL -> WorkerRole.WORKER_ROLE_PREFILL;
            case DECODE -> WorkerRole.WORKER_ROLE_DECODE;
            case UNSPECIFIED -> WorkerRole.WORKER_ROLE_UNSPECIFIED;
        };
    }

    public static WorkerView.State state(WorkerState s) {
        return switch (s) {
            case WORKER_STATE_STARTING -> WorkerView.State.STARTING;
            case WORKER_STATE_READY -> WorkerView.State.READY;
            case WORKER_STATE_DRAINING -> WorkerView.State.DRAINING;
            case WORKER_STATE_STOPPED -> WorkerView.State.STOPPED;
            case WORKER_STATE_UNHEALTHY -> WorkerView.State.UNHEALTHY;
            default -> WorkerView.State.UNSPECIFIED;
        };
    }

    public static WorkerState state(WorkerView.State s) {
        return switch (s) {
            case STARTING -> WorkerState.WORKER_STATE_STARTING;
            case READY -> WorkerState.WORKER_STATE_READY;
            case DRAINING -> WorkerState.WORKER_STATE_DRAINING;
            case STOPPED -> WorkerState.WORKER_STATE_STOPPED;
            case UNHEALTHY -> WorkerState.WORKER_STATE_UNHEALTHY;
            case UNSPECIFIED -> WorkerState.WORKER_STATE_UNSPECIFIED;
        };
    }

    public static WorkerView.Isolation isolation(TenantIsolation i) {
        return switch (i) {
            case TENANT_ISOLATION_SALT_ALL_BLOCKS -> WorkerView.Isolation.SALT_ALL_BLOCKS;
            case TENANT_ISOLATION_SALT_AFTER_PUBLIC_PREFIX -> WorkerView.Isolation.SALT_AFTER_PUBLIC_PREFIX;
            default -> WorkerView.Isolation.NONE;
        };
    }

    public static TenantIsolation isolation(WorkerView.Isolation i) {
        return switch (i) {
            case SALT_ALL_BLOCKS -> TenantIsolation.TENANT_ISOLATION_SALT_ALL_BLOCKS;
            case SALT_AFTER_PUBLIC_PREFIX -> TenantIsolation.TENANT_ISOLATION_SALT_AFTER_PUBLIC_PREFIX;
            case NONE -> TenantIsolation.TENANT_ISOLATION_NONE;
        };
    }
}
