package io.flotilla.planner.leader;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.flotilla.planner.support.SimClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two planner replicas electing a leader on one Lease of the fabric8 mock API server in CRUD mode. Each replica
 * has its own clock (nodes' clocks differ); the test runs the rounds and moves the clocks.
 */
@EnableKubernetesMockClient(crud = true)
class LeaseElectionTest {

    private static final String NS = "flotilla";
    private static final Duration LEASE = Duration.ofSeconds(15);

    KubernetesClient client;

    private final SimClock clockA = new SimClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final SimClock clockB = new SimClock(Instant.parse("2026-01-01T00:00:07Z")); // skewed by 7 s

    private LeaseElection replica(String name, SimClock clock) {
        return new LeaseElection(client, NS, "flotilla-planner", name, LEASE, clock);
    }

    private void advance(Duration d) {
        clockA.advance(d);
        clockB.advance(d);
    }

    private Lease lease() {
        return client.leases().inNamespace(NS).withName("flotilla-planner").get();
    }

    @Test
    void theFirstReplicaLeadsTheSecondFollowsAndTakesOverOnlyAfterTheLeaderStoppedRenewingForALeaseDuration() {
        LeaseElection a = replica("planner-a", clockA);
        LeaseElection b = replica("planner-b", clockB);

        assertThat(a.renew()).isTrue();
        assertThat(b.renew()).isFalse();
        assertThat(b.holder()).isEqualTo("planner-a");
        assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("planner-a");
        assertThat(lease().getSpec().getLeaseDurationSeconds()).isEqualTo(15);

        for (int i = 0; i < 5; i++) { // the leader renews every 5 s: the follower never takes over
            advance(Duration.ofSeconds(5));
            assertThat(a.renew()).isTrue();
            assertThat(b.renew()).isFalse();
        }

        // planner-a's pod goes: no more renewals. Until a lease duration after planner-b last saw a renewal, it waits.
        advance(Duration.ofSeconds(14));
        assertThat(b.renew()).isFalse();
        advance(Duration.ofSeconds(1));
        assertThat(b.renew()).isTrue();
        assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("planner-b");
        assertThat(lease().getSpec().getLeaseTransitions()).isEqualTo(1);
        assertThat(b.transitions()).isEqualTo(1);

        // A replica that comes back late finds the lease taken and follows.
        assertThat(a.renew()).isFalse();
        assertThat(a.holder()).isEqualTo("planner-b");
        assertThat(a.leads()).isFalse();
    }

    @Test
    void aReleasedLeaseIsTakenAtTheNextRoundWithoutWaiting() {
        LeaseElection a = replica("planner-a", clockA);
        LeaseElection b = replica("planner-b", clockB);
        a.renew();
        b.renew();

        a.release(); // graceful shutdown of the leader's pod
        assertThat(a.leads()).isFalse();
        assertThat(lease().getSpec().getHolderIdentity()).isEmpty();

        assertThat(b.renew()).isTrue();
        assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("planner-b");
    }

    @Test
    void aLeaderWhoseRenewalIsRejectedStopsLeading() {
        LeaseElection a = replica("planner-a", clockA);
        LeaseElection b = replica("planner-b", clockB);
        a.renew();
        b.renew();
        advance(Duration.ofSeconds(20));
        assertThat(b.renew()).isTrue(); // planner-a was partitioned away and the lease expired

        assertThat(a.renew()).isFalse(); // the lease names planner-b: planner-a follows, it does not fight
        assertThat(b.renew()).isTrue();
        assertThat(lease().getSpec().getLeaseTransitions()).isEqualTo(1);
    }
}
