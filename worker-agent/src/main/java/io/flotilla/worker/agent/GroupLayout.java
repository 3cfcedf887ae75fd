package io.flotilla.worker.agent;

import io.flotilla.protocol.v1.WorkerGroup;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where this worker sits in a multi-pod instance, from the variables a LeaderWorkerSet sets in every pod of a
 * group: {@code LWS_LEADER_ADDRESS} (the leader's DNS name, {@code <lws>-<group>.<service>.<namespace>}),
 * {@code LWS_GROUP_SIZE} (pods in the group) and {@code LWS_WORKER_INDEX} (0 for the leader). A pod without them
 * is a single-pod worker. Only the leader publishes membership: the group is one routable worker, the other ranks
 * serve the engine through it.
 *
 * @param groupId       the leader pod's name (first label of the leader address), the same in every rank
 * @param rank          {@code LWS_WORKER_INDEX}
 * @param size          {@code LWS_GROUP_SIZE}
 * @param leaderAddress {@code LWS_LEADER_ADDRESS}
 */
public record GroupLayout(String groupId, int rank, int size, String leaderAddress) {

    public static final String LEADER_ADDRESS = "LWS_LEADER_ADDRESS";
    public static final String GROUP_SIZE = "LWS_GROUP_SIZE";
    public static final String WORKER_INDEX = "LWS_WORKER_INDEX";

    public GroupLayout {
        if (size < 1 || rank < 0 || rank >= size || groupId.isBlank()) {
            throw new IllegalArgumentException("not a group layout: rank " + rank + " of " + size + " in '" + groupId + "'");
        }
    }

    /**
     * The layout the environment describes; empty when none of the three variables is set. Some but not all of
     * them, or a value that is not a rank of the group, fails the worker's start with the variable named: a pod
     * that cannot tell whether it leads must not register.
     */
    public static Optional<GroupLayout> fromEnvironment(Map<String, String> env) {
        String address = env.get(LEADER_ADDRESS);
        String size = env.get(GROUP_SIZE);
        String index = env.get(WORKER_INDEX);
        if (address == null && size == null && index == null) {
            return Optional.empty();
        }
        List<String> missing = new ArrayList<>();
        for (String name : List.of(LEADER_ADDRESS, GROUP_SIZE, WORKER_INDEX)) {
            if (env.get(name) == null || env.get(name).isBlank()) {
                missing.add(name);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException("a LeaderWorkerSet pod sets all of " + LEADER_ADDRESS + ", " + GROUP_SIZE + " and "
                    + WORKER_INDEX + "; missing " + String.join(", ", missing));
        }
        int n = integer(GROUP_SIZE, size);
        int rank = integer(WORKER_INDEX, index);
        String leader = address.strip();
        int dot = leader.indexOf('.');
        try {
            return Optional.of(new GroupLayout(dot < 0 ? leader : leader.substring(0, dot), rank, n, leader));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(WORKER_INDEX + "=" + index + " with " + GROUP_SIZE + "=" + size + ": " + e.getMessage());
        }
    }

    private static int integer(String name, String value) {
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalStateException(name + " must be an integer, was '" + value + "'");
        }
    }

    public boolean leader() {
        return rank == 0;
    }

    public WorkerGroup advertised() {
        return WorkerGroup.newBuilder().setGroupId(groupId).setRank(rank).setSize(size).setLeaderAddress(leaderAddress).build();
    }
}
