package io.flotilla.planner.config;

import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.flotilla.planner.api.LeaderEndpoint;
import io.flotilla.planner.leader.LeaseElection;
import io.flotilla.planner.leader.Leadership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** Which planner replica applies: the election, its rounds and its actuator endpoint. */
@Configuration(proxyBeanMethods = false)
class LeaderElectionWiring {

    private static final Logger log = LoggerFactory.getLogger(LeaderElectionWiring.class);

    /** {@link Leadership#SOLE} unless leader-election is enabled: then a Lease in the planner's namespace. */
    @Bean
    Leadership leadership(PlannerProperties p, Clock clock) {
        PlannerProperties.LeaderElection e = p.leaderElection();
        if (!e.enabled()) {
            return Leadership.SOLE;
        }
        String identity = e.identity();
        if (identity == null || identity.isBlank()) {
            try {
                identity = InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException ex) {
                throw new IllegalStateException(PlannerProperties.PREFIX + ".leader-election.identity is empty and the host "
                        + "has no name: set it (the pod name)", ex);
            }
        }
        return new LeaseElection(new KubernetesClientBuilder().build(), p.namespace(), e.leaseName(), identity,
                e.leaseDuration(), clock);
    }

    /** Election rounds every renew-period from start; on stop the rounds end and a held lease is released. */
    @Bean
    SmartLifecycle leaderElectionRounds(Leadership leadership, PlannerProperties p) {
        return new SmartLifecycle() {
            private ScheduledExecutorService timer;
            private volatile boolean running;

            @Override
            public void start() {
                if (leadership instanceof LeaseElection lease) {
                    timer = Executors.newSingleThreadScheduledExecutor(r -> {
                        Thread t = new Thread(r, "planner-leader-election");
                        t.setDaemon(true);
                        return t;
                    });
                    long ms = p.leaderElection().renewPeriod().toMillis();
                    timer.scheduleWithFixedDelay(() -> {
                        try {
                            lease.renew();
                        } catch (RuntimeException ex) {
                            log.error("leader election round failed", ex);
                        }
                    }, 0, ms, TimeUnit.MILLISECONDS);
                }
                running = true;
            }

            @Override
            public void stop() {
                if (timer != null) {
                    timer.shutdownNow();
                    try {
                        timer.awaitTermination(5, TimeUnit.SECONDS);
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (leadership instanceof LeaseElection lease) {
                    lease.release();
                }
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }
        };
    }

    @Bean
    LeaderEndpoint leaderEndpoint(Leadership leadership) {
        return new LeaderEndpoint(leadership);
    }
}
