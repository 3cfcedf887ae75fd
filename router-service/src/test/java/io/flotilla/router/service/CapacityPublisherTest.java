package io.flotilla.router.service;

import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.WatchCapacityRequest;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WatchCapacity publisher on virtual time: first message, coalescing, unchanged states, slow and
 * cancelled watchers, model filters, heartbeat and shutdown.
 */
class CapacityPublisherTest {

    private static final Duration COALESCE = Duration.ofMillis(2);
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final AtomicReference<List<ModelCapacity>> state = new AtomicReference<>(List.of(model("m", 2, false)));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final CapacityPublisher publisher = new CapacityPublisher(state::get, "router-a", time,
            () -> time.now(TimeUnit.NANOSECONDS), new CapacityPublisher.Settings(COALESCE, HEARTBEAT), registry).start();

    @AfterEach
    void stop() {
        time.dispose();
    }

    @Test
    void aNewWatcherGetsTheWholeStateAtOnce() {
        FakeStream<CapacityUpdate> w = watch();

        assertThat(w.sent).hasSize(1);
        assertThat(w.last().getRouterId()).isEqualTo("router-a");
        assertThat(w.last().getModelsList()).isEqualTo(state.get());
        assertThat(w.last().getVersion()).isEqualTo(1);
        assertThat(publisher.watchers()).isEqualTo(1);
        assertThat(registry.get("flotilla.router.capacity.watchers").gauge().value()).isEqualTo(1.0);
    }

    @Test
    void theFirstChangeAfterAQuietSpellGoesOutAtOnceAndLaterOnesWaitForTheIntervalsEnd() {
        FakeStream<CapacityUpdate> w = watch();
        time.advanceTimeBy(Duration.ofSeconds(1));

        set(model("m", 1, false));
        assertThat(w.sent).as("sent without waiting").hasSize(2);

        set(model("m", 0, true));
        time.advanceTimeBy(Duration.ofMillis(1));
        set(model("m", 3, false));
        assertThat(w.sent).as("within the interval: held").hasSize(2);

        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(w.sent).as("both changes in one update at the interval's end").hasSize(3);
        assertThat(w.last().getModels(0).getFreeWorkers()).isEqualTo(3);
        assertThat(w.last().getVersion()).isGreaterThan(w.sent.get(1).getVersion());
        assertThat(registry.get("flotilla.router.capacity.push.delay").timer().count()).isEqualTo(2);
    }

    @Test
    void withoutWatchersNothingIsBuilt() {
        java.util.concurrent.atomic.AtomicInteger builds = new java.util.concurrent.atomic.AtomicInteger();
        CapacityPublisher idle = new CapacityPublisher(() -> {
            builds.incrementAndGet();
            return state.get();
        }, "router-b", time, () -> time.now(TimeUnit.NANOSECONDS), new CapacityPublisher.Settings(COALESCE, HEARTBEAT), new SimpleMeterRegistry()).start();

        idle.changed();
        time.advanceTimeBy(HEARTBEAT.multipliedBy(2));
        assertThat(builds).hasValue(0);

        FakeStream<CapacityUpdate> w = new FakeStream<>();
        idle.watch(WatchCapacityRequest.getDefaultInstance(), w);
        assertThat(w.sent).hasSize(1);
        assertThat(builds).hasValue(1);
    }

    @Test
    void anUpdateThatCostsMuchSpacesTheNextSoThePublisherKeepsToItsShareOfTheThread() {
        java.util.concurrent.atomic.AtomicLong spent = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong buildCost = new java.util.concurrent.atomic.AtomicLong();
        CapacityPublisher costly = new CapacityPublisher(() -> {
            spent.addAndGet(buildCost.get()); // the clock moves while the update is built, as a fleet's would
            return state.get();
        }, "router-c", time, () -> time.now(TimeUnit.NANOSECONDS) + spent.get(),
                new CapacityPublisher.Settings(COALESCE, HEARTBEAT, 0.1), new SimpleMeterRegistry()).start();
        FakeStream<CapacityUpdate> w = new FakeStream<>();
        costly.watch(WatchCapacityRequest.getDefaultInstance(), w);
        time.advanceTimeBy(Duration.ofSeconds(1));

        buildCost.set(Duration.ofMillis(10).toNanos());
        state.set(List.of(model("m", 1, false)));
        costly.changed();
        assertThat(w.sent).as("the first change after a quiet spell goes out at once").hasSize(2);

        state.set(List.of(model("m", 0, true)));
        costly.changed();
        time.advanceTimeBy(Duration.ofMillis(89));
        assertThat(w.sent).as("10 ms to build at a 10 % share: the next starts 100 ms after the last").hasSize(2);
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(w.sent).hasSize(3);

        buildCost.set(0);
        time.advanceTimeBy(Duration.ofMillis(100));
        state.set(List.of(model("m", 2, false)));
        costly.changed();
        time.advanceTimeBy(COALESCE);
        assertThat(w.sent).as("a cheap fleet again: coalesce is the interval").hasSize(4);
    }

    @Test
    void aChangeThatLeavesTheStateAsItWasSendsNothing() {
        FakeStream<CapacityUpdate> w = watch();
        time.advanceTimeBy(Duration.ofSeconds(1));

        publisher.changed();
        time.advanceTimeBy(Duration.ofMillis(10));

        assertThat(w.sent).hasSize(1);
    }

    @Test
    void aSlowWatcherGetsOnlyTheLatestStateAndDoesNotHoldUpTheOthers() {
        FakeStream<CapacityUpdate> slow = watch();
        FakeStream<CapacityUpdate> fast = watch();
        slow.ready(false);

        for (int free = 3; free <= 6; free++) {
            time.advanceTimeBy(Duration.ofMillis(5));
            set(model("m", free, false));
        }

        assertThat(fast.sent).as("every update").hasSize(5);
        assertThat(slow.sent).as("nothing while not ready").hasSize(1);
        slow.ready(true);
        assertThat(slow.sent).hasSize(2);
        assertThat(slow.last()).as("the latest only").isEqualTo(fast.last());
        assertThat(registry.get("flotilla.router.capacity.superseded").counter().count()).isEqualTo(3);
        assertThat(registry.get("flotilla.router.capacity.updates").counter().count()).isEqualTo(2 + 5);
    }

    @Test
    void aCancelledWatcherIsForgotten() {
        FakeStream<CapacityUpdate> gone = watch();
        FakeStream<CapacityUpdate> stays = watch();

        gone.cancel();
        time.advanceTimeBy(Duration.ofMillis(5));
        set(model("m", 0, true));

        assertThat(publisher.watchers()).isEqualTo(1);
        assertThat(gone.sent).hasSize(1);
        assertThat(stays.sent).hasSize(2);
    }

    @Test
    void aWatcherOfSomeModelsSeesOnlyThose() {
        state.set(List.of(model("a", 1, false), model("b", 0, true)));
        FakeStream<CapacityUpdate> onlyB = watch("b");
        FakeStream<CapacityUpdate> all = watch();

        assertThat(onlyB.last().getModelsList()).extracting(ModelCapacity::getModel).containsExactly("b");
        assertThat(all.last().getModelsList()).extracting(ModelCapacity::getModel).containsExactly("a", "b");
        assertThat(onlyB.last().getVersion()).isEqualTo(all.last().getVersion());
    }

    @Test
    void aQuietRouterSendsTheStateAgainEveryHeartbeat() {
        FakeStream<CapacityUpdate> w = watch();

        time.advanceTimeBy(HEARTBEAT.minusMillis(1));
        assertThat(w.sent).hasSize(1);
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(w.sent).hasSize(2);
        assertThat(w.last().getModelsList()).isEqualTo(w.sent.get(0).getModelsList());
        assertThat(w.last().getVersion()).isEqualTo(2);
    }

    @Test
    void stoppingEndsEveryStreamWithUnavailable() {
        FakeStream<CapacityUpdate> w = watch();

        publisher.close();

        assertThat(Status.fromThrowable(w.error).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(publisher.watchers()).isZero();
        FakeStream<CapacityUpdate> late = watch();
        assertThat(late.sent).isEmpty();
        assertThat(Status.fromThrowable(late.error).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }

    private FakeStream<CapacityUpdate> watch(String... models) {
        FakeStream<CapacityUpdate> stream = new FakeStream<>();
        publisher.watch(WatchCapacityRequest.newBuilder().setGatewayId("gw").addAllModels(List.of(models)).build(), stream);
        return stream;
    }

    private void set(ModelCapacity... models) {
        state.set(List.of(models));
        publisher.changed();
    }

    private static ModelCapacity model(String name, int free, boolean saturated) {
        return ModelCapacity.newBuilder().setModel(name).setFreeWorkers(free).setSaturated(saturated).build();
    }
}
