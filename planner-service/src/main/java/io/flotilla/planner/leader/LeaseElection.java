package io.flotilla.planner.leader;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;

/**
 * Leader election among planner replicas on a {@code coordination.k8s.io/v1} Lease, one {@link #renew()}
 * round at a time on an injected clock.
 *
 * <p>The Lease is read and written through fabric8's {@link LeaseLock} (its resource version makes every
 * write optimistic: of two replicas racing for an expired lease exactly one update succeeds). The rule is
 * client-go's and fabric8's {@code LeaderElector}'s: the holder renews; another replica takes the lease
 * once it has seen the same record unchanged for the record's lease duration, measured on its own clock
 * from when it observed the record (so clocks of different nodes are never compared), or at once when
 * the holder released it. fabric8's {@code LeaderElector} itself is not used: it reads the wall clock
 * (a static {@code now()}) and runs its own retry loop, so a test could only sleep through lease
 * durations; here the caller drives rounds and the clock. Spring Cloud Kubernetes's leader module,
 * which wraps that elector, is not published for the release train that matches Spring Boot 4.1
 * (spring-cloud-kubernetes-fabric8-leader 5.0.4 is named by its BOM but absent from Maven Central).
 *
 * <p>Invariant: {@link #leads()} is true only after a round in which this replica's create or update of
 * the Lease succeeded; any failed round (conflict, API error) makes it a follower until a later round
 * succeeds. A leader stalled longer than the lease duration between a round and its use may overlap a
 * successor by that stall; the planner applies right after asking.
 */
public final class LeaseElection implements Leadership {

    private static final Logger log = LoggerFactory.getLogger(LeaseElection.class);

    private final KubernetesClient client;
    private final LeaseLock lock;
    private final String identity;
    private final Duration leaseDuration;
    private final Clock clock;

    private volatile boolean leads;
    private volatile String holder = "";
    private volatile int transitions;
    private LeaderElectionRecord observed;
    private Instant observedAt;

    public LeaseElection(KubernetesClient client, String namespace, String leaseName, String identity, Duration leaseDuration,
                         Clock clock) {
        if (identity == null || identity.isBlank()) {
            throw new IllegalArgumentException("a leader-election identity is required");
        }
        this.client = Objects.requireNonNull(client, "client");
        this.lock = new LeaseLock(namespace, leaseName, identity);
        this.identity = identity;
        this.leaseDuration = leaseDuration;
        this.clock = clock;
    }

    /**
     * One round: read the Lease, then renew it (holder), take it (absent, released or expired) or follow.
     *
     * @return whether this replica leads after the round
     */
    public synchronized boolean renew() {
        Instant now = clock.instant();
        boolean was = leads;
        try {
            LeaderElectionRecord current = lock.get(client);
            if (current == null) {
                lock.create(client, record(now, now, 0));
                become(true, identity, 0);
            } else {
                if (!current.equals(observed)) {
                    observed = current;
                    observedAt = now;
                }
                String held = current.getHolderIdentity() == null ? "" : current.getHolderIdentity();
                Duration term = current.getLeaseDuration() == null ? leaseDuration : current.getLeaseDuration();
                if (identity.equals(held)) {
                    lock.update(client, record(toInstant(current.getAcquireTime(), now), now, current.getLeaderTransitions()));
                    become(true, identity, current.getLeaderTransitions());
                } else if (held.isEmpty() || !now.isBefore(observedAt.plus(term))) {
                    int next = current.getLeaderTransitions() + 1;
                    lock.update(client, record(now, now, next));
                    become(true, identity, next);
                } else {
                    become(false, held, current.getLeaderTransitions());
                }
            }
        } catch (KubernetesClientException | IllegalStateException e) {
            become(false, holder, transitions);
            log.warn("leader election on {} failed this round: {}", lock.describe(), e.getMessage());
        }
        if (was != leads) {
            log.info("{} {} leadership (lease {})", identity, leads ? "took" : "lost", lock.describe());
        }
        return leads;
    }

    /** Gives the lease up if held (shutdown), so that another replica takes it at its next round. */
    public synchronized void release() {
        if (!leads) {
            return;
        }
        leads = false;
        try {
            LeaderElectionRecord current = lock.get(client);
            if (current != null && identity.equals(current.getHolderIdentity())) {
                Instant now = clock.instant();
                lock.update(client, new LeaderElectionRecord("", leaseDuration, zoned(now), zoned(now), current.getLeaderTransitions()));
                holder = "";
            }
        } catch (KubernetesClientException | IllegalStateException e) {
            log.warn("cannot release {}: {}", lock.describe(), e.getMessage());
        }
    }

    private void become(boolean leader, String holderNow, int transitionsNow) {
        leads = leader;
        holder = holderNow;
        transitions = transitionsNow;
    }

    private LeaderElectionRecord record(Instant acquired, Instant renewed, int transitionsNow) {
        return new LeaderElectionRecord(identity, leaseDuration, zoned(acquired), zoned(renewed), transitionsNow);
    }

    private static ZonedDateTime zoned(Instant t) {
        return t.atZone(ZoneOffset.UTC);
    }

    private static Instant toInstant(ZonedDateTime t, Instant otherwise) {
        return t == null ? otherwise : t.toInstant();
    }

    @Override
    public boolean leads() {
        return leads;
    }

    /** The holder as last read (empty: none or released). */
    public String holder() {
        return holder;
    }

    public String identity() {
        return identity;
    }

    /** How many times the lease changed hands, as last read. */
    public int transitions() {
        return transitions;
    }

    @Override
    public String describe() {
        return "Lease " + lock.describe();
    }
}
