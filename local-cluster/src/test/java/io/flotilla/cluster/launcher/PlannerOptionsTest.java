package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PlannerOptionsTest {

    private static final Path STATE = Path.of("/tmp/flotilla-test-state");

    private static List<String> plannerArgs(ClusterLayout layout, PlannerOptions options) {
        return layout.services(options).stream().filter(s -> s.name().equals("planner")).findFirst().orElseThrow().args();
    }

    @Test
    void theDefaultPlannerIsShadowAndFollowsTheWorkersSimSpeedup() {
        ClusterLayout layout = new ClusterLayout(2, 0, 0, "kv", "k:9092", STATE, 10.0);
        assertThat(plannerArgs(layout, PlannerOptions.SHADOW))
                .containsExactly("--spring.kafka.bootstrap-servers=k:9092", "--server.port=8084",
                        "--flotilla.planner.model=flotilla-sim", "--flotilla.planner.connector=shadow",
                        "--flotilla.planner.sim-speedup=10.0");
        assertThat(layout.services()).isEqualTo(layout.services(PlannerOptions.SHADOW));
    }

    @Test
    void localConnectorIntervalAndSettingsBecomePlannerArguments() {
        PlannerOptions options = PlannerOptions.parse("local", "5s",
                List.of("scaling.min-hold=20s", "flotilla.planner.aggregated.max=4"));
        ClusterLayout layout = new ClusterLayout(1, 0, 0, "kv", "k:9092", STATE, 2.0);
        assertThat(plannerArgs(layout, options)).containsExactly("--spring.kafka.bootstrap-servers=k:9092",
                "--server.port=8084", "--flotilla.planner.model=flotilla-sim", "--flotilla.planner.connector=local",
                "--flotilla.planner.sim-speedup=2.0",
                "--flotilla.planner.interval=5000ms", "--flotilla.planner.scaling.min-hold=20s",
                "--flotilla.planner.aggregated.max=4");
    }

    @Test
    void intervalsTakeMillisecondsSecondsMinutesOrBareSeconds() {
        assertThat(PlannerOptions.duration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(PlannerOptions.duration("5s")).isEqualTo(Duration.ofSeconds(5));
        assertThat(PlannerOptions.duration("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(PlannerOptions.duration("7")).isEqualTo(Duration.ofSeconds(7));
        assertThat(PlannerOptions.parse("shadow", null, List.of()).interval()).isNull();
    }

    @Test
    void badOptionsAreRefusedWithTheFlagToUse() {
        assertThatThrownBy(() -> PlannerOptions.parse("kubernetes", null, List.of()))
                .isInstanceOf(LauncherException.class).hasMessage("--planner must be shadow or local, not kubernetes");
        assertThatThrownBy(() -> PlannerOptions.parse("local", "5 seconds", List.of()))
                .isInstanceOf(LauncherException.class).hasMessageContaining("--planner-interval wants");
        assertThatThrownBy(() -> PlannerOptions.parse("local", "0s", List.of()))
                .isInstanceOf(LauncherException.class).hasMessage("--planner-interval must be positive");
        assertThatThrownBy(() -> PlannerOptions.parse("local", null, List.of("sim-speedup=3")))
                .isInstanceOf(LauncherException.class).hasMessageContaining("--sim-speedup");
        assertThatThrownBy(() -> PlannerOptions.parse("local", null, List.of("interval=3s")))
                .isInstanceOf(LauncherException.class).hasMessageContaining("--planner-interval");
        assertThatThrownBy(() -> PlannerOptions.parse("local", null, List.of("flotilla.planner.model=llama")))
                .isInstanceOf(LauncherException.class)
                .hasMessage("--planner-opt model: set it with --model (the planner plans the served model's pools)");
        assertThatThrownBy(() -> PlannerOptions.parse("local", null, List.of("sla.headroom")))
                .isInstanceOf(LauncherException.class).hasMessageContaining("KEY=VALUE");
        assertThatThrownBy(() -> PlannerOptions.parse("local", null, List.of("sla.headroom=0.1", "sla.headroom=0.2")))
                .isInstanceOf(LauncherException.class).hasMessage("--planner-opt sla.headroom is given twice");
        assertThatThrownBy(() -> PlannerOptions.parse("local", null, List.of("Bad Key=1")))
                .isInstanceOf(LauncherException.class).hasMessageContaining("not a flotilla.planner setting name");
    }
}
