package io.flotilla.planner.connector;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.flotilla.planner.core.Pool;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The worker LeaderWorkerSets of one namespace (labelled like the worker Deployments), where one instance of a pool is
 * a group of pods: a leader (rank 0, the routable worker, pod {@code <set>-<group>}) and {@code size - 1} more ranks
 * ({@code <set>-<group>-<rank>}). The LeaderWorkerSet controller creates and deletes whole groups: raising
 * {@code spec.replicas} adds groups, lowering it deletes the groups with the highest indices, leader and ranks
 * together (its leader StatefulSet removes the highest ordinals, and a leader pod owns its ranks).
 *
 * <p>An instance is whole when every one of its {@code size} pods is Ready; until then its leader's worker counts as
 * starting, not ready, in the planner's view of the pool. A group seen incomplete (a rank missing
 * or not Ready) for longer than {@code readyDeadline}, on this planner's clock, is overdue: the connector removes it
 * whole by deleting its pods (the controller recreates the group from scratch, as its {@code RecreateGroupOnPodRestart}
 * policy does after a pod failure), so a group never stays partial. Counted in
 * {@code flotilla_planner_partial_groups_total{pool}}; {@code flotilla_planner_whole_groups{pool}} is the number of
 * whole groups last seen.
 *
 * <p>Why LeaderWorkerSet and not a StatefulSet per instance: it is the upstream API for multi-pod inference (llm-d
 * and Dynamo deploy with it), its controller already keeps a group's pods one unit (gang restart, rolling update by
 * group, a scale subresource), and the planner keeps one object per pool to patch, as with a Deployment.
 *
 * <p>Called from the connector's thread only (its lock).
 */
final class WorkerGroups {

    static final ResourceDefinitionContext LWS = new ResourceDefinitionContext.Builder().withGroup("leaderworkerset.x-k8s.io")
            .withVersion("v1").withPlural("leaderworkersets").withKind("LeaderWorkerSet").withNamespaced(true).build();
    static final String SET_LABEL = "leaderworkerset.sigs.k8s.io/name";
    static final String GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index";
    static final String WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index";

    private static final Logger log = LoggerFactory.getLogger(WorkerGroups.class);

    /**
     * One group as its pods show it.
     *
     * @param key    set, index and the leader pod's uid: a recreated group is a new key
     * @param leader the leader pod's name (its worker id), null while the leader pod does not exist
     * @param pods   its pods that are not being deleted
     * @param ready  those of them that are Ready
     */
    record Group(String key, int index, String leader, int pods, int ready) {
    }

    private final KubernetesClient client;
    private final String namespace;
    private final Clock clock;
    private final Duration readyDeadline;
    private final MeterRegistry registry;
    private final Map<String, Instant> incompleteSince = new HashMap<>();
    private final Map<Pool, List<Group>> overdue = new EnumMap<>(Pool.class);
    private final Map<Pool, AtomicInteger> whole = new EnumMap<>(Pool.class);
    private final Map<Pool, Counter> removed = new EnumMap<>(Pool.class);
    private boolean unavailable;

    WorkerGroups(KubernetesClient client, String namespace, Clock clock, Duration readyDeadline, MeterRegistry registry) {
        this.client = client;
        this.namespace = namespace;
        this.clock = clock;
        this.readyDeadline = readyDeadline;
        this.registry = registry;
    }

    /**
     * The pool's LeaderWorkerSet (the first by name when several carry its labels); empty too where the cluster has no
     * LeaderWorkerSet API (404) or the planner may not list them (403), logged once.
     */
    Optional<GenericKubernetesResource> set(Pool pool) {
        if (unavailable) {
            return Optional.empty();
        }
        try {
            return client.genericKubernetesResources(LWS).inNamespace(namespace)
                    .withLabel(KubernetesConnector.COMPONENT_LABEL, "worker").withLabel(KubernetesConnector.ROLE_LABEL, pool.label())
                    .list().getItems().stream()
                    .filter(s -> s.getMetadata().getDeletionTimestamp() == null)
                    .min(Comparator.comparing(s -> s.getMetadata().getName()));
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404 && e.getCode() != 403) {
                throw e;
            }
            unavailable = true;
            log.info("no LeaderWorkerSets to scale ({}): worker pools are Deployments only", e.getCode() == 404
                    ? "the cluster has no leaderworkerset.x-k8s.io API" : "the planner may not list leaderworkersets");
            return Optional.empty();
        }
    }

    static int replicas(GenericKubernetesResource set) {
        Object r = set.get("spec", "replicas");
        return r instanceof Number n ? n.intValue() : 1; // the API server's default
    }

    static int size(GenericKubernetesResource set) {
        Object s = set.get("spec", "leaderWorkerTemplate", "size");
        return s instanceof Number n ? n.intValue() : 1;
    }

    static String annotation(GenericKubernetesResource set) {
        Map<String, String> a = set.getMetadata().getAnnotations();
        return a == null ? null : a.get(KubernetesConnector.APPLIED_ANNOTATION);
    }

    void patch(GenericKubernetesResource set, int replicas) {
        String name = set.getMetadata().getName();
        log.info("scaling LeaderWorkerSet {} from {} to {} groups of {} pods", name, replicas(set), replicas, size(set));
        client.genericKubernetesResources(LWS).inNamespace(namespace).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + KubernetesConnector.APPLIED_ANNOTATION + "\":\"" + replicas + "\"}},"
                        + "\"spec\":{\"replicas\":" + replicas + "}}");
    }

    /** Worker ids (leader pod names) of the groups that lowering the set to {@code want} groups deletes: the highest indices. */
    static List<String> leadersRemovedBy(GenericKubernetesResource set, int want) {
        List<String> leaders = new ArrayList<>();
        for (int i = replicas(set) - 1; i >= want; i--) {
            leaders.add(set.getMetadata().getName() + "-" + i);
        }
        return leaders;
    }

    /**
     * Reads the set's groups: updates the whole-group gauge, starts or ends each group's incomplete time, and keeps the
     * groups incomplete for longer than the deadline for {@link #overdue}.
     *
     * @return the leaders (worker ids) of the groups that are not whole
     */
    Set<String> observe(Pool pool, GenericKubernetesResource set) {
        int size = size(set);
        List<Group> groups = groups(set);
        Instant now = clock.instant();
        int wholeNow = 0;
        Set<String> notWhole = new HashSet<>();
        List<Group> late = new ArrayList<>();
        String prefix = set.getMetadata().getName() + "/";
        incompleteSince.keySet().removeIf(k -> k.startsWith(prefix) && groups.stream().noneMatch(g -> g.key().equals(k)));
        for (Group g : groups) {
            if (g.index() >= replicas(set)) {
                continue; // being removed by a scale-down
            }
            if (g.pods() == size && g.ready() == size) {
                wholeNow++;
                incompleteSince.remove(g.key());
                continue;
            }
            if (g.leader() != null) {
                notWhole.add(g.leader());
            }
            Instant since = incompleteSince.computeIfAbsent(g.key(), k -> now);
            if (!now.isBefore(since.plus(readyDeadline))) {
                late.add(g);
            }
        }
        whole.computeIfAbsent(pool, p -> {
            AtomicInteger n = new AtomicInteger();
            Gauge.builder("flotilla.planner.whole_groups", n, AtomicInteger::get)
                    .description("Multi-pod instances of the pool whose every rank is Ready").tag("pool", p.label()).register(registry);
            return n;
        }).set(wholeNow);
        overdue.put(pool, List.copyOf(late));
        return notWhole;
    }

    /** Groups of the pool incomplete for longer than the deadline at the last {@link #observe}. */
    List<Group> overdue(Pool pool) {
        return overdue.getOrDefault(pool, List.of());
    }

    /** Deletes every pod of the group (leader first): the controller recreates it whole. */
    void remove(Pool pool, GenericKubernetesResource set, Group g) {
        String name = set.getMetadata().getName();
        log.warn("group {} of LeaderWorkerSet {} has {} of {} pods Ready after {}; removing it whole to be recreated",
                g.index(), name, g.ready(), size(set), readyDeadline);
        if (g.leader() != null) {
            client.pods().inNamespace(namespace).withName(g.leader()).delete();
        }
        client.pods().inNamespace(namespace).withLabel(SET_LABEL, name).withLabel(GROUP_INDEX, Integer.toString(g.index())).delete();
        incompleteSince.remove(g.key());
        overdue.computeIfPresent(pool, (p, l) -> l.stream().filter(o -> !o.key().equals(g.key())).toList());
        removed.computeIfAbsent(pool, p -> Counter.builder("flotilla.planner.partial_groups").tag("pool", p.label())
                .description("Multi-pod instances removed whole because a rank was not Ready within the group ready deadline")
                .register(registry)).increment();
    }

    private List<Group> groups(GenericKubernetesResource set) {
        String name = set.getMetadata().getName();
        Map<Integer, List<Pod>> byIndex = new TreeMap<>();
        for (Pod pod : client.pods().inNamespace(namespace).withLabel(SET_LABEL, name).list().getItems()) {
            Map<String, String> labels = pod.getMetadata().getLabels();
            if (pod.getMetadata().getDeletionTimestamp() != null || labels == null || labels.get(GROUP_INDEX) == null) {
                continue;
            }
            try {
                byIndex.computeIfAbsent(Integer.parseInt(labels.get(GROUP_INDEX)), i -> new ArrayList<>()).add(pod);
            } catch (NumberFormatException e) {
                log.debug("pod {} has group index '{}'", pod.getMetadata().getName(), labels.get(GROUP_INDEX));
            }
        }
        List<Group> groups = new ArrayList<>();
        byIndex.forEach((index, pods) -> {
            Pod leader = pods.stream().filter(p -> "0".equals(p.getMetadata().getLabels().get(WORKER_INDEX))).findFirst().orElse(null);
            String uid = leader == null ? "none" : String.valueOf(leader.getMetadata().getUid());
            int ready = (int) pods.stream().filter(KubernetesConnector::ready).count();
            groups.add(new Group(name + "/" + index + "/" + uid, index, leader == null ? null : leader.getMetadata().getName(),
                    pods.size(), ready));
        });
        return groups;
    }
}
