package io.flotilla.worker.kv;

import io.flotilla.worker.engine.KvPin;
import io.flotilla.worker.engine.sim.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LeaseTableTest {

    private final ManualClock clock = new ManualClock();
    private final LeaseTable leases = new LeaseTable("e1", clock, Duration.ofSeconds(30));

    /** Counts releases, so "exactly once" is visible. */
    private static final class CountingPin implements KvPin {
        int releases;

        @Override
        public void release() {
            releases++;
        }

        @Override
        public boolean released() {
            return releases > 0;
        }
    }

    @Test
    void aReleasedLeaseUnpinsOnceAndIsGone() {
        CountingPin pin = new CountingPin();
        KvLease lease = leases.grant("r1", 3, pin);

        assertThat(lease.id()).startsWith("e1-");
        assertThat(lease.expiresAtMs()).isEqualTo(clock.millis() + 30_000);
        assertThat(leases.active()).isEqualTo(1);
        assertThat(leases.release(lease.id())).isTrue();
        assertThat(leases.release(lease.id())).isFalse();
        assertThat(pin.releases).isEqualTo(1);
        assertThat(leases.active()).isZero();
        assertThat(leases.releasedTotal()).isEqualTo(1);
        clock.advance(Duration.ofMinutes(1));
        assertThat(leases.expire()).isZero();
        assertThat(pin.releases).isEqualTo(1);
    }

    @Test
    void aLeaseExpiresAtItsExpiryAndNotBefore() {
        CountingPin early = new CountingPin();
        KvLease first = leases.grant("r1", 1, early);
        clock.advance(Duration.ofSeconds(10));
        CountingPin late = new CountingPin();
        leases.grant("r2", 1, late);

        clock.advance(Duration.ofMillis(19_999));
        assertThat(leases.expire()).isZero();
        clock.advance(Duration.ofMillis(1));
        assertThat(leases.expire()).isEqualTo(1);
        assertThat(early.releases).isEqualTo(1);
        assertThat(late.releases).isZero();
        assertThat(leases.release(first.id())).as("an expired lease cannot be released again").isFalse();
        assertThat(leases.expiredTotal()).isEqualTo(1);
        assertThat(leases.active()).isEqualTo(1);
    }

    @Test
    void closeUnpinsEverythingAndRefusesNewLeases() {
        CountingPin a = new CountingPin();
        CountingPin b = new CountingPin();
        leases.grant("r1", 1, a);
        leases.grant("r2", 1, b);
        leases.close();
        assertThat(a.releases + b.releases).isEqualTo(2);
        CountingPin c = new CountingPin();
        assertThatThrownBy(() -> leases.grant("r3", 1, c)).isInstanceOf(IllegalStateException.class);
        assertThat(c.releases).as("a refused pin is released, not leaked").isEqualTo(1);
    }

    @Test
    void leaseIdsAreUniqueWithinAnEpoch() {
        String a = leases.grant("r", 1, new CountingPin()).id();
        String b = leases.grant("r", 1, new CountingPin()).id();
        assertThat(a).isNotEqualTo(b);
    }
}
