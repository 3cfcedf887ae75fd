package io.flotilla.planner.config;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.plan.PlannerConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link PlannerProperties} is the one source of the planner's settings: the defaults the READMEs
 * state are the ones an empty configuration binds to, every setting is documented, and bad settings
 * fail with their name.
 */
class PlannerPropertiesTest {

    private static final Pattern CODE = Pattern.compile("`([^`]*)`");

    /**
     * {@code key → documented default} ("—": none) of the markdown table rows in the section under the
     * heading starting with {@code section}.
     */
    static Map<String, String> documented(Path markdown, String section) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        boolean in = false;
        for (String line : Files.readAllLines(markdown)) {
            if (line.startsWith("#")) {
                in = line.replaceFirst("^#+\\s*", "").startsWith(section);
            }
            if (!in || !line.startsWith("| `")) {
                continue;
            }
            String[] cells = line.split("\\s\\|\\s");
            List<String> keys = codes(cells[0]);
            List<String> defaults = cells[1].trim().equals("—") ? List.of() : codes(cells[1]);
            for (int i = 0; i < keys.size(); i++) {
                out.put(keys.get(i), defaults.isEmpty() ? "—" : defaults.get(i));
            }
            assertThat(defaults.isEmpty() || defaults.size() == keys.size()).as("one default per key: %s", line).isTrue();
        }
        return out;
    }

    private static List<String> codes(String cell) {
        List<String> out = new ArrayList<>();
        Matcher m = CODE.matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** Every setting as {@code dotted.kebab-key → value}, read from the record components. */
    static Map<String, Object> flatten(Record r, String prefix) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (RecordComponent c : r.getClass().getRecordComponents()) {
            Object v;
            try {
                v = c.getAccessor().invoke(r);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
            String key = prefix + c.getName().replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
            if (v instanceof Record nested && c.getType().getEnclosingClass() == PlannerProperties.class) {
                out.putAll(flatten(nested, key + "."));
            } else {
                out.put(key, v);
            }
        }
        return out;
    }

    private static Path repoFile(String name) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("planner-service"))) {
                return dir.resolve(name);
            }
        }
        throw new IllegalStateException("repository root not found above " + Path.of("").toAbsolutePath());
    }

    @Test
    void theDocumentedDefaultsAreTheEffectiveOnes() throws IOException {
        PlannerProperties defaults = PlannerProperties.defaults();
        Map<String, Object> effective = flatten(defaults, "");
        // docs/configuration.md, every service's rows, is held by bench's DocumentedDefaultsTest.
        Map<String, String> docs = documented(repoFile("planner-service/README.md"), "Configuration");
        assertThat(docs).hasSizeGreaterThan(30);
        for (Map.Entry<String, String> d : docs.entrySet()) {
            assertThat(effective).as("documented key %s", d.getKey()).containsKey(d.getKey());
            if (d.getValue().equals("—")) {
                assertThat(effective.get(d.getKey())).as(d.getKey()).isNull();
            } else {
                // Binding the documented value explicitly must change nothing.
                assertThat(PlannerProperties.bind(Map.of(d.getKey(), d.getValue()))).as("%s = %s", d.getKey(), d.getValue())
                        .isEqualTo(defaults);
            }
        }
    }

    @Test
    void everySettingIsDocumented() throws IOException {
        Map<String, String> docs = documented(repoFile("planner-service/README.md"), "Configuration");
        assertThat(docs.keySet()).containsAll(flatten(PlannerProperties.defaults(), "").keySet());
    }

    /** The check can fail: a default documented wrong is caught. */
    @Test
    void aWrongDocumentedDefaultIsCaught() {
        assertThat(PlannerProperties.bind(Map.of("scaling.min-hold", "61s"))).isNotEqualTo(PlannerProperties.defaults());
    }

    @Test
    void settingsBindAsSpringBindsThemAndBuildTheAlgorithmsConfiguration() {
        PlannerConfig c = PlannerProperties.bind(Map.of("interval", "5s", "mode", "disaggregated", "scaling.min-hold", "10s",
                "seasonality.max-period", "2m", "decode.max", "3", "sla.ttft", "4s")).toConfig();
        assertThat(c.interval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.pools()).containsExactlyInAnyOrder(Pool.PREFILL, Pool.DECODE);
        assertThat(c.scaling().minHold()).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.seasonality().maxPeriod()).isEqualTo(Duration.ofMinutes(2));
        assertThat(c.limits().get(Pool.DECODE).max()).isEqualTo(3);
        assertThat(c.ttftTargetMs()).isEqualTo(4000);
        assertThat(c.learnReadyTime()).isTrue();
        assertThat(c.intervals(Duration.ofMinutes(2))).isEqualTo(24);
    }

    @Test
    void theGroupedSettingsReachTheAlgorithmAndTheConnectors() {
        PlannerProperties p = PlannerProperties.bind(Map.of("cold-start.ready-time", "30s", "cold-start.learn", "false",
                "sla.itl", "200ms", "sla.headroom", "0.2", "local.home", "/srv/flotilla", "local.max-workers", "8",
                "deadlines.drain", "5s", "deadlines.group-ready", "1m"));
        PlannerConfig c = p.toConfig();
        assertThat(c.readyTime()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.learnReadyTime()).isFalse();
        assertThat(c.itlTargetMs()).isEqualTo(200);
        assertThat(c.headroom()).isEqualTo(0.2);
        assertThat(p.local().root()).isEqualTo(Path.of("/srv/flotilla"));
        assertThat(p.local().maxWorkers()).isEqualTo(8);
        assertThat(p.deadlines()).isEqualTo(new PlannerProperties.Deadlines(Duration.ofSeconds(5), Duration.ofMinutes(1)));
        assertThat(PlannerProperties.defaults().local().root()).as("no home: the working directory")
                .isEqualTo(Path.of("").toAbsolutePath());
    }

    @Test
    void unknownAndInvalidSettingsFailWithTheirNames() {
        assertThatThrownBy(() -> PlannerProperties.bind(Map.of("scaling.min-stable", "10s")))
                .hasStackTraceContaining("scaling.min-stable");
        assertThatThrownBy(() -> PlannerProperties.bind(Map.of("scaling.trust", "1.0")))
                .hasStackTraceContaining("scaling.trust");
        assertThatThrownBy(() -> PlannerProperties.bind(Map.of("predictor.kind", "arima")))
                .hasStackTraceContaining("predictor.kind");
        assertThatThrownBy(() -> PlannerProperties.bind(Map.of("aggregated.min", "5", "aggregated.max", "2")).toConfig())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flotilla.planner");
        assertThatThrownBy(() -> PlannerProperties.bind(Map.of("seasonality.min-period", "10m", "seasonality.max-period", "5m")).toConfig())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("min-period");
    }
}
