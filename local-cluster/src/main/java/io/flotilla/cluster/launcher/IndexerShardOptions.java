package io.flotilla.cluster.launcher;

import io.flotilla.protocol.Ports;
import io.flotilla.protocol.kafka.Topics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code up --indexer-shards N}: N kv-indexer processes that share flotilla.kv-events' partitions as one consumer
 * group (kv-indexer {@code flotilla.indexer.sharding}), with one snapshot directory (per partition inside it), and
 * every router given all of them ({@code flotilla.router.indexer.addresses}). Shard 0 is the usual {@code kv-indexer}
 * on its ports; shard k (1 … 7) is {@code kv-indexer-k}, gRPC 7020+k, management 8050+k. One shard (the default)
 * is the unsharded indexer, as without the flag.
 *
 * @param shards indexer processes (1 … the partitions of flotilla.kv-events)
 */
record IndexerShardOptions(int shards) {

    static final IndexerShardOptions ONE = new IndexerShardOptions(1);
    static final String GROUP = "flotilla-indexer";

    IndexerShardOptions {
        int partitions = Topics.KV_EVENTS.partitions();
        if (shards < 1 || shards > partitions) {
            throw new LauncherException("--indexer-shards must be between 1 and " + partitions + " (the partitions of "
                    + Topics.KV_EVENTS.name() + "; a shard beyond them would be assigned none): " + shards);
        }
    }

    boolean sharded() {
        return shards > 1;
    }

    static int grpcPort(int k) {
        return k == 0 ? Ports.INDEXER_GRPC : 7020 + k;
    }

    static int managementPort(int k) {
        return k == 0 ? Ports.INDEXER_MANAGEMENT : 8050 + k;
    }

    /** {@code services} with the indexer split into its shards and every router pointed at all of them. */
    List<ServiceSpec> apply(List<ServiceSpec> services) {
        if (!sharded()) {
            return services;
        }
        List<String> addresses = new ArrayList<>();
        for (int k = 0; k < shards; k++) {
            addresses.add("127.0.0.1:" + grpcPort(k));
        }
        List<ServiceSpec> out = new ArrayList<>();
        for (ServiceSpec s : services) {
            if (s.name().equals("kv-indexer")) {
                for (int k = 0; k < shards; k++) {
                    out.add(shard(s, k));
                }
            } else if (s.module().equals("router-service")) {
                out.add(s.withExtraArgs(List.of("--flotilla.router.indexer.addresses=" + String.join(",", addresses))));
            } else {
                out.add(s);
            }
        }
        return out;
    }

    /** Shard k of the indexer {@code spec}: its own ports, the group's settings, the shared snapshot directory. */
    private static ServiceSpec shard(ServiceSpec spec, int k) {
        List<String> args = new ArrayList<>();
        for (String a : spec.args()) {
            if (!a.startsWith("--server.port=") && !a.startsWith("--flotilla.indexer.grpc-port=")) {
                args.add(a);
            }
        }
        args.add("--server.port=" + managementPort(k));
        args.add("--flotilla.indexer.grpc-port=" + grpcPort(k));
        args.add("--flotilla.indexer.sharding.enabled=true");
        args.add("--flotilla.indexer.sharding.group-id=" + GROUP);
        Map<String, Integer> ports = new LinkedHashMap<>();
        ports.put("grpc", grpcPort(k));
        ports.put("mgmt", managementPort(k));
        return new ServiceSpec(k == 0 ? "kv-indexer" : "kv-indexer-" + k, spec.module(), ports, managementPort(k), args,
                spec.heap(), spec.directMemory());
    }
}
