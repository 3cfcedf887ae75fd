package io.flotilla.planner.profile;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClosedLoopRunnerTest {

    @Test
    void sendsExactlyTheRequestsWithFreshPromptsAndNeverMoreInFlightThanTheConcurrency() {
        ConcurrentLinkedQueue<int[]> prompts = new ConcurrentLinkedQueue<>();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger maxInFlight = new AtomicInteger();
        CompletionProbe probe = (prompt, maxTokens) -> {
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            prompts.add(prompt);
            inFlight.decrementAndGet();
            return new Measurement(1, 1, maxTokens);
        };
        List<Measurement> out = new ClosedLoopRunner(probe, 7).run(64, 3, 4, 25);

        assertThat(out).hasSize(25).allSatisfy(m -> assertThat(m.tokens()).isEqualTo(3));
        assertThat(maxInFlight.get()).isLessThanOrEqualTo(4);
        assertThat(prompts).hasSize(25).allSatisfy(p -> {
            assertThat(p).hasSize(64);
            assertThat(Arrays.stream(p).allMatch(t -> t >= ClosedLoopRunner.MIN_TOKEN && t < ClosedLoopRunner.MAX_TOKEN)).isTrue();
        });
        Set<List<Integer>> distinct = new HashSet<>();
        prompts.forEach(p -> distinct.add(Arrays.stream(p).boxed().toList()));
        assertThat(distinct).hasSize(25); // no shared prefixes: the cache never helps
    }

    @Test
    void aSmallVocabularyKeepsEveryIdInside() {
        ConcurrentLinkedQueue<int[]> prompts = new ConcurrentLinkedQueue<>();
        CompletionProbe probe = (prompt, maxTokens) -> {
            prompts.add(prompt);
            return new Measurement(1, 1, maxTokens);
        };
        new ClosedLoopRunner(probe, 3, 0, 1000).run(512, 1, 2, 6);

        assertThat(prompts).hasSize(6).allSatisfy(p -> assertThat(Arrays.stream(p).allMatch(t -> t >= 0 && t < 1000)).isTrue());
        assertThatThrownBy(() -> new ClosedLoopRunner(probe, 3, 10, 10)).hasMessageContaining("empty");
    }

    @Test
    void aFailingRequestFailsThePoint() {
        CompletionProbe broken = (prompt, maxTokens) -> {
            throw new IllegalStateException("503");
        };
        assertThatThrownBy(() -> new ClosedLoopRunner(broken, 1).run(8, 1, 2, 4)).hasMessageContaining("503");
    }
}
