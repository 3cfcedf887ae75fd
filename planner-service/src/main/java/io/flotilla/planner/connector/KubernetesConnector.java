package io.flotilla.planner.connector;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.FleetWorker;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;

/**
 * Scales the worker Deployments labelled {@code flotilla.io/component=worker, flotilla.io/role=<pool>} in
 * one namespace (k8s/base/worker-*.yaml; RBAC in k8s/base/planner-rbac.yaml: get/list/watch/patch deployments,
 * get/list/watch pods).
 * <ul>
 *   <li>up: one JSON merge patch of {@code spec.replicas} together with the annotation
 *       {@value #APPLIED_ANNOTATION} = the same count (what the planner last set);</li>
 *   <li>down by k: picks k victim pods in the order the ReplicaSet deletes them (pods whose worker is
 *       not live in membership, then not-Ready pods, then the newest), drains the live ones through
 *       {@code WorkerService.Drain} (pod name = worker id), marks them with
 *       {@value #DELETION_COST} = {@value #VICTIM_COST} (best effort: it needs {@code patch} on pods,
 *       which the shipped RBAC does not grant; without it the ReplicaSet's own newest-first choice is
 *       relied on), and lowers {@code spec.replicas} only when every drain has finished. A failed drain
 *       abandons the scale-down (retried by a later decision);</li>
 *   <li>changed by hand: {@code spec.replicas} differs from the annotation (and no scale-down of ours is
 *       pending). A Deployment without the annotation is adopted as it is, not reported. The state
 *       lives in the Deployment, so a restarted planner still tells its own changes from others'.</li>
 * </ul>
 * A pool whose instances span several pods is a LeaderWorkerSet with the same labels instead ({@link WorkerGroups}):
 * up patches its {@code spec.replicas} (groups) the same way; down by k drains the leaders of the k groups with the
 * highest indices (the ones the LeaderWorkerSet controller deletes) and then lowers {@code spec.replicas}, so each
 * group is drained and removed as one; a group that has not had every rank Ready within the group ready deadline is
 * removed whole (its leader drained first when it is live) and recreated by the controller. RBAC: get/list/watch/patch
 * leaderworkersets, delete pods.
 */
public final class KubernetesConnector implements ScalingConnector {

    public static final String COMPONENT_LABEL = "flotilla.io/component";
    public static final String ROLE_LABEL = "flotilla.io/role";
    public static final String APPLIED_ANNOTATION = "flotilla.io/planner-replicas";
    public static final String DELETION_COST = "controller.kubernetes.io/pod-deletion-cost";
    public static final String VICTIM_COST = "-1000";
    static final int DEFAULT_GROUP_READY_MINUTES = 10;

    private static final Logger log = LoggerFactory.getLogger(KubernetesConnector.class);

    private record PendingDown(int replicas, long generation) {
    }

    private final KubernetesClient client;
    private final String namespace;
    private final DrainClient drains;
    private final Duration drainDeadline;
    private final Executor executor;
    private final BooleanSupplier leads;
    private final WorkerGroups groups;
    private final Map<Pool, PendingDown> pending = new EnumMap<>(Pool.class);
    /** Keys of partial groups whose leader is being drained before the group is removed. */
    private final Set<String> removing = new HashSet<>();
    private long generation;
    private boolean podPatchForbidden;

    /** @param executor runs the scale-down patch once the drains finished (the test passes a direct executor) */
    public KubernetesConnector(KubernetesClient client, String namespace, DrainClient drains, Duration drainDeadline,
                               Executor executor) {
        this(client, namespace, drains, drainDeadline, executor, () -> true);
    }

    /**
     * Multi-pod groups get {@value #DEFAULT_GROUP_READY_MINUTES} min on the system clock to become whole, unmetered.
     *
     * @param leads whether this planner replica still leads when a scale-down's drains finish: a replica that lost
     *              the lease meanwhile abandons the patch (its successor decides again)
     */
    public KubernetesConnector(KubernetesClient client, String namespace, DrainClient drains, Duration drainDeadline,
                               Executor executor, BooleanSupplier leads) {
        this(client, namespace, drains, drainDeadline, executor, leads, new WorkerGroups(client, namespace, Clock.systemUTC(),
                Duration.ofMinutes(DEFAULT_GROUP_READY_MINUTES), new SimpleMeterRegistry()));
    }

    /**
     * @param clock              the planner's clock: how long a group has been incomplete
     * @param groupReadyDeadline how long a multi-pod group may stay incomplete before it is removed whole
     * @param registry           where {@code flotilla_planner_partial_groups_total} and {@code flotilla_planner_whole_groups} go
     */
    public KubernetesConnector(KubernetesClient client, String namespace, DrainClient drains, Duration drainDeadline,
                               Executor executor, BooleanSupplier leads, Clock clock, Duration groupReadyDeadline,
                               MeterRegistry registry) {
        this(client, namespace, drains, drainDeadline, executor, leads,
                new WorkerGroups(client, namespace, clock, groupReadyDeadline, registry));
    }

    private KubernetesConnector(KubernetesClient client, String namespace, DrainClient drains, Duration drainDeadline,
                                Executor executor, BooleanSupplier leads, WorkerGroups groups) {
        this.groups = groups;
        this.leads = leads;
        this.client = client;
        this.namespace = namespace;
        this.drains = drains;
        this.drainDeadline = drainDeadline;
        this.executor = executor;
    }

    @Override
    public String name() {
        return "kubernetes";
    }

    @Override
    public synchronized ConnectorView observe(Fleet fleet) {
        PoolCounts current = PoolCounts.NONE;
        Set<Pool> byHand = EnumSet.noneOf(Pool.class);
        Set<String> notWhole = new HashSet<>();
        for (Pool p : Pool.values()) {
            Optional<Deployment> d = deployment(p);
            Optional<GenericKubernetesResource> set = d.isPresent() ? Optional.empty() : groups.set(p);
            if (d.isEmpty() && set.isEmpty()) {
                continue;
            }
            set.ifPresent(s -> notWhole.addAll(groups.observe(p, s)));
            PendingDown down = pending.get(p);
            if (down != null) {
                current = current.with(p, down.replicas);
                continue;
            }
            int replicas = d.isPresent() ? replicas(d.get()) : WorkerGroups.replicas(set.get());
            current = current.with(p, replicas);
            String applied = d.isPresent() ? annotation(d.get()) : WorkerGroups.annotation(set.get());
            if (applied != null && !applied.equals(Integer.toString(replicas))) {
                byHand.add(p);
            }
        }
        return new ConnectorView(current, byHand, notWhole);
    }

    @Override
    public synchronized Optional<PoolCounts> apply(PoolCounts targets, Fleet fleet) {
        PoolCounts applied = PoolCounts.NONE;
        for (Pool p : targets.pools()) {
            Optional<Deployment> found = deployment(p);
            if (found.isEmpty()) {
                Optional<GenericKubernetesResource> set = groups.set(p);
                if (set.isPresent()) {
                    applyGroups(p, set.get(), targets.get(p), fleet);
                    applied = applied.with(p, targets.get(p));
                } else {
                    log.warn("no Deployment or LeaderWorkerSet labelled {}=worker,{}={} in namespace {}; the {} pool is not scaled",
                            COMPONENT_LABEL, ROLE_LABEL, p.label(), namespace, p.label());
                }
                continue;
            }
            Deployment d = found.get();
            int want = targets.get(p);
            PendingDown down = pending.get(p);
            if (down != null && down.replicas == want) {
                applied = applied.with(p, want);
                continue;
            }
            pending.remove(p); // a newer decision supersedes a pending scale-down
            int spec = replicas(d);
            if (want >= spec) {
                if (want != spec || !Integer.toString(want).equals(annotation(d))) {
                    patch(d, want);
                }
            } else {
                scaleDown(p, d, spec - want, want, fleet);
            }
            applied = applied.with(p, want);
        }
        return Optional.of(applied);
    }

    /** {@link #apply} for a pool of multi-pod groups: overdue partial groups go first, then the replicas as for a Deployment. */
    private void applyGroups(Pool p, GenericKubernetesResource set, int want, Fleet fleet) {
        for (WorkerGroups.Group g : groups.overdue(p)) {
            removePartial(p, set, g, fleet);
        }
        PendingDown down = pending.get(p);
        if (down != null && down.replicas == want) {
            return;
        }
        pending.remove(p);
        int spec = WorkerGroups.replicas(set);
        if (want >= spec) {
            if (want != spec || !Integer.toString(want).equals(WorkerGroups.annotation(set))) {
                groups.patch(set, want);
            }
            return;
        }
        long gen = ++generation;
        pending.put(p, new PendingDown(want, gen));
        List<CompletableFuture<Integer>> waits = new ArrayList<>();
        for (String leader : WorkerGroups.leadersRemovedBy(set, want)) {
            Optional<FleetWorker> w = fleet.get(leader).filter(FleetWorker::live);
            if (w.isPresent()) {
                log.info("draining {} ({} pool) before its group leaves {} ({} groups)", leader, p.label(),
                        set.getMetadata().getName(), want);
                waits.add(drains.drain(w.get().endpoint(), drainDeadline));
            }
        }
        String name = set.getMetadata().getName();
        CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new))
                .whenCompleteAsync((ok, error) -> drained(p, name, want, gen, error), executor);
    }

    /** Removes a group that never became whole: its leader drained first when membership has it live, then every pod. */
    private void removePartial(Pool p, GenericKubernetesResource set, WorkerGroups.Group g, Fleet fleet) {
        if (!removing.add(g.key())) {
            return; // its leader's drain is still running
        }
        Optional<FleetWorker> leader = g.leader() == null ? Optional.empty() : fleet.get(g.leader()).filter(FleetWorker::live);
        CompletableFuture<Integer> drained = leader.map(w -> drains.drain(w.endpoint(), drainDeadline))
                .orElse(CompletableFuture.completedFuture(0));
        drained.whenCompleteAsync((ok, error) -> removeDrained(p, set, g), executor);
    }

    private synchronized void removeDrained(Pool p, GenericKubernetesResource set, WorkerGroups.Group g) {
        removing.remove(g.key());
        if (leads.getAsBoolean()) {
            groups.remove(p, set, g); // drained or not: a partial group cannot serve, and it must not stay
        }
    }

    private void scaleDown(Pool pool, Deployment d, int count, int want, Fleet fleet) {
        List<Pod> victims = victims(d, count, fleet);
        long gen = ++generation;
        pending.put(pool, new PendingDown(want, gen));
        List<CompletableFuture<Integer>> waits = new ArrayList<>();
        for (Pod pod : victims) {
            String id = pod.getMetadata().getName();
            markVictim(pod);
            Optional<FleetWorker> w = fleet.get(id).filter(FleetWorker::live);
            if (w.isPresent()) {
                log.info("draining {} ({} pool) before scaling {} down to {}", id, pool.label(), d.getMetadata().getName(), want);
                waits.add(drains.drain(w.get().endpoint(), drainDeadline));
            }
        }
        CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new))
                .whenCompleteAsync((ok, error) -> drained(pool, d.getMetadata().getName(), want, gen, error), executor);
    }

    private synchronized void drained(Pool pool, String deployment, int want, long gen, Throwable error) {
        PendingDown down = pending.get(pool);
        if (down == null || down.generation != gen) {
            return; // superseded
        }
        pending.remove(pool);
        if (error != null) {
            log.warn("scale-down of {} to {} abandoned: a drain failed ({})", deployment, want, error.toString());
            return;
        }
        if (!leads.getAsBoolean()) {
            log.info("scale-down of {} to {} abandoned: this planner no longer leads", deployment, want);
            return;
        }
        Optional<Deployment> d = deployment(pool);
        if (d.isPresent()) {
            patch(d.get(), want);
        } else {
            groups.set(pool).ifPresent(s -> groups.patch(s, want));
        }
    }

    /** The pods the ReplicaSet would delete first: not live in membership, then not Ready, then newest. */
    private List<Pod> victims(Deployment d, int count, Fleet fleet) {
        Map<String, String> selector = d.getSpec().getSelector() != null && d.getSpec().getSelector().getMatchLabels() != null
                ? d.getSpec().getSelector().getMatchLabels() : d.getMetadata().getLabels();
        List<Pod> pods = new ArrayList<>(client.pods().inNamespace(namespace).withLabels(selector).list().getItems());
        pods.removeIf(pod -> pod.getMetadata().getDeletionTimestamp() != null);
        pods.sort(Comparator.<Pod>comparingInt(pod -> fleet.get(pod.getMetadata().getName()).map(FleetWorker::live).orElse(false) ? 1 : 0)
                .thenComparingInt(pod -> ready(pod) ? 1 : 0)
                .thenComparing(pod -> String.valueOf(pod.getMetadata().getCreationTimestamp()), Comparator.reverseOrder())
                .thenComparing(pod -> pod.getMetadata().getName(), Comparator.reverseOrder()));
        return pods.subList(0, Math.min(count, pods.size()));
    }

    private void markVictim(Pod pod) {
        if (podPatchForbidden) {
            return;
        }
        try {
            client.pods().inNamespace(namespace).withName(pod.getMetadata().getName()).patch(PatchContext.of(PatchType.JSON_MERGE),
                    "{\"metadata\":{\"annotations\":{\"" + DELETION_COST + "\":\"" + VICTIM_COST + "\"}}}");
        } catch (KubernetesClientException e) {
            if (e.getCode() == 403) {
                podPatchForbidden = true;
                log.warn("cannot annotate pods ({}); scale-down relies on the ReplicaSet deleting the newest pods, "
                        + "which are the ones drained. Grant 'patch' on pods to make it exact.", e.getMessage());
            } else {
                log.warn("cannot mark {} for deletion: {}", pod.getMetadata().getName(), e.getMessage());
            }
        }
    }

    private void patch(Deployment d, int replicas) {
        String name = d.getMetadata().getName();
        log.info("scaling {} from {} to {} replicas", name, replicas(d), replicas);
        client.apps().deployments().inNamespace(namespace).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + APPLIED_ANNOTATION + "\":\"" + replicas + "\"}},"
                        + "\"spec\":{\"replicas\":" + replicas + "}}");
    }

    private Optional<Deployment> deployment(Pool pool) {
        return client.apps().deployments().inNamespace(namespace)
                .withLabel(COMPONENT_LABEL, "worker").withLabel(ROLE_LABEL, pool.label())
                .list().getItems().stream()
                .filter(d -> d.getMetadata().getDeletionTimestamp() == null)
                .min(Comparator.comparing(d -> d.getMetadata().getName()));
    }

    private static int replicas(Deployment d) {
        Integer r = d.getSpec() == null ? null : d.getSpec().getReplicas();
        return r == null ? 1 : r; // the API server's default
    }

    private static String annotation(Deployment d) {
        Map<String, String> a = d.getMetadata().getAnnotations();
        return a == null ? null : a.get(APPLIED_ANNOTATION);
    }

    static boolean ready(Pod pod) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    @Override
    public void close() {
        drains.close();
        client.close();
    }
}
