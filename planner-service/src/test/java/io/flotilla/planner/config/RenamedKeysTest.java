package io.flotilla.planner.config;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.mock.env.MockEnvironment;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RenamedKeysTest {

    private static MockEnvironment variables(Map<String, Object> env) {
        MockEnvironment environment = new MockEnvironment();
        environment.getPropertySources().addLast(
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, env));
        return environment;
    }

    @Test
    void aRenamedKeyStopsStartUpNamingItsReplacement() {
        assertThatThrownBy(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.planner.ttft-target", "2s")
                .withProperty("flotilla.planner.learnReadyTime", "false")))
                .hasMessageContaining("flotilla.planner.ttft-target became flotilla.planner.sla.ttft")
                .hasMessageContaining("flotilla.planner.learn-ready-time became flotilla.planner.cold-start.learn");
        assertThatThrownBy(() -> RenamedKeys.check(variables(Map.of("FLOTILLA_PLANNER_DRAIN_DEADLINE", "30s"))))
                .hasMessageContaining("flotilla.planner.drain-deadline became flotilla.planner.deadlines.drain");
    }

    @Test
    void currentKeysPass() {
        assertThatCode(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.planner.sla.ttft", "2s")
                .withProperty("flotilla.planner.cold-start.ready-time", "30s")
                .withProperty("flotilla.planner.scaling.min-hold", "10s"))).doesNotThrowAnyException();
        assertThatCode(() -> RenamedKeys.check(variables(Map.of(
                "FLOTILLA_PLANNER_LOCAL_HOME", "/srv/flotilla",
                "FLOTILLA_PLANNER_LOCAL_MAX_WORKERS", "8",
                "FLOTILLA_PLANNER_DEADLINES_GROUP_READY", "5m")))).doesNotThrowAnyException();
    }

    /**
     * The planner's binding refuses an unread key on its own, without its replacement: the check must come first.
     * PlannerProperties is registered ahead of the wiring here, so it binds before any of the wiring's beans.
     */
    @Test
    void theCheckRunsBeforeThePropertiesAreBound() {
        new ApplicationContextRunner().withUserConfiguration(Properties.class, PlannerWiring.class)
                .withPropertyValues("flotilla.planner.headroom=0.2")
                .run(context -> assertThat(context).getFailure()
                        .hasMessageContaining("flotilla.planner.headroom became flotilla.planner.sla.headroom"));
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(PlannerProperties.class)
    static class Properties {
    }
}
