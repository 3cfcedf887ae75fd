package io.flotilla.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SyntheticWorkloadTest {

    private final TokenExpander expander = new TokenExpander();

    private static ArrivalProcess constant() {
        return new ArrivalProcess(ArrivalProcess.Kind.CONSTANT, 10, 0, 0, 1);
    }

    @Test
    void sharedPrefixGroupsShareExactlyTheirPrefix() {
        SharedPrefixWorkload w = new SharedPrefixWorkload(expander, 3, 4, 100, 20, 8, constant(), 42);
        List<int[]> prompts = new ArrayList<>();
        PlannedRequest r;
        while ((r = w.next()) != null) {
            assertThat(r.maxTokens()).isEqualTo(8);
            assertThat(r.prompt().length()).isEqualTo(120);
            prompts.add(r.prompt().tokens());
        }
        assertThat(prompts).hasSize(12);

        Map<String, Integer> byPrefix = new HashMap<>();
        for (int[] p : prompts) {
            byPrefix.merge(Arrays.toString(Arrays.copyOf(p, 100)), 1, Integer::sum);
        }
        assertThat(byPrefix.values()).containsExactlyInAnyOrder(4, 4, 4);
        assertThat(prompts.stream().map(p -> Arrays.toString(Arrays.copyOfRange(p, 100, 120))).distinct()).hasSize(12);
    }

    @Test
    void sharedPrefixOrderInterleavesGroupsAndIsSeeded() {
        List<String> a = firstPrefixes(42);
        assertThat(firstPrefixes(42)).isEqualTo(a);
        assertThat(firstPrefixes(43)).isNotEqualTo(a);
        assertThat(a.subList(0, 4).stream().distinct().count()).isGreaterThan(1);
    }

    private List<String> firstPrefixes(long seed) {
        SharedPrefixWorkload w = new SharedPrefixWorkload(expander, 4, 4, 16, 1, 1, constant(), seed);
        List<String> out = new ArrayList<>();
        PlannedRequest r;
        while ((r = w.next()) != null) {
            out.add(Arrays.toString(Arrays.copyOf(r.prompt().tokens(), 16)));
        }
        return out;
    }

    @Test
    void sessionTurnsGrowByPreviousPromptOutputAndNewUserTokens() {
        SessionWorkload w = new SessionWorkload(expander, 2, 3, 50, 10, 4, 250, constant(), 9);
        PlannedRequest t0 = w.next();
        assertThat(t0.session()).isZero();
        assertThat(t0.turn()).isZero();
        assertThat(t0.prompt().length()).isEqualTo(60);
        assertThat(w.next().session()).isEqualTo(1);
        assertThat(w.next()).isNull();

        int[] output = {11, 12, 13, 14};
        Workload.FollowUp f1 = w.followUp(t0, new Completion(true, 4, output));
        assertThat(f1.delayMs()).isEqualTo(250);
        PlannedRequest t1 = f1.request();
        assertThat(t1.turn()).isEqualTo(1);
        assertThat(t1.session()).isZero();
        int[] p1 = t1.prompt().tokens();
        assertThat(p1).hasSize(74);
        assertThat(Arrays.copyOf(p1, 60)).containsExactly(t0.prompt().tokens());
        assertThat(Arrays.copyOfRange(p1, 60, 64)).containsExactly(output);

        // A text-only server: substitute output ids, still a prefix extension.
        PlannedRequest t2 = w.followUp(t1, new Completion(true, 4, new int[0])).request();
        int[] p2 = t2.prompt().tokens();
        assertThat(p2).hasSize(74 + 4 + 10);
        assertThat(Arrays.copyOf(p2, 74)).containsExactly(p1);
        assertThat(Arrays.copyOfRange(p2, 74, 78)).containsExactly(
                expander.tokens(TokenExpander.derive(TokenExpander.TAG_SESSION_OUTPUT, 9, 0, 1), 4));

        assertThat(w.followUp(t2, new Completion(true, 4, output))).as("last turn").isNull();
        assertThat(w.followUp(t0, new Completion(false, 0, new int[0]))).as("failed turn ends the session").isNull();
        assertThat(w.wantsOutputTokenIds()).isTrue();
    }
}
