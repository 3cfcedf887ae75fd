package io.flotilla.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.core.MethodParameter;
import org.springframework.core.convert.ConversionService;
import org.springframework.core.convert.TypeDescriptor;

/**
 * Every default docs/configuration.md's tables state is the default the service runs with: each
 * service's properties record is bound from an empty environment, as Spring binds it at start-up, and
 * the documented value, converted as Spring would convert it from a property, must equal it.
 *
 * <p>A row is checked when each of its keys has one literal default (a backticked value); symbolic
 * defaults ({@code 7100+n}, {@code worker-<index>}, "none", "unset") are skipped, and so are the
 * {@link #DERIVED} keys whose default is computed from another setting.
 */
class DocumentedDefaultsTest {

    private static final Path README = Path.of("..", "docs", "configuration.md");

    /** Properties record of each {@code flotilla.<service>} prefix. */
    private static final Map<String, String> RECORDS = Map.of(
            "flotilla.gateway", "io.flotilla.gateway.config.GatewayProperties",
            "flotilla.router", "io.flotilla.router.config.RouterProperties",
            "flotilla.indexer", "io.flotilla.indexer.service.IndexerProperties",
            "flotilla.planner", "io.flotilla.planner.config.PlannerProperties",
            "flotilla.worker", "io.flotilla.worker.settings.WorkerProperties",
            "flotilla.kafka", "io.flotilla.kafka.boot.FlotillaKafkaProperties");

    /** Keys whose documented default is a rule over other settings, not a value of their own. */
    private static final Set<String> DERIVED = Set.of("flotilla.worker.tokenizer-source");

    private static final Pattern TICKED = Pattern.compile("`([^`]*)`");
    private static final ConversionService CONVERSION = ApplicationConversionService.getSharedInstance();

    record Documented(String key, String value) {
    }

    @Test
    void everyDocumentedDefaultIsTheEffectiveOne() throws Exception {
        List<Documented> rows = documented();
        assertThat(rows).as("literal defaults found in docs/configuration.md's tables").hasSizeGreaterThan(40);
        List<String> wrong = new ArrayList<>();
        for (Documented d : rows) {
            String prefix = prefixOf(d.key());
            Object bound = bindEmpty(prefix);
            Setting setting = setting(bound, d.key().substring(prefix.length() + 1));
            if (setting == null) {
                wrong.add(d.key() + ": documented, but " + bound.getClass().getSimpleName() + " has no such setting");
                continue;
            }
            Object expected = CONVERSION.convert(d.value(), TypeDescriptor.valueOf(String.class),
                    new TypeDescriptor(new MethodParameter(setting.accessor(), -1)));
            if (!Objects.equals(expected, setting.value())) {
                wrong.add(d.key() + ": README says `" + d.value() + "`, the service runs with " + setting.value());
            }
        }
        assertThat(wrong).as("README defaults that differ from the effective ones").isEmpty();
    }

    /** The (key, literal default) pairs of docs/configuration.md's tables. */
    static List<Documented> documented() throws IOException {
        List<Documented> out = new ArrayList<>();
        for (String line : Files.readAllLines(README)) {
            if (!line.startsWith("| `flotilla.")) {
                continue;
            }
            String[] cells = line.split("\\|");
            List<String> keys = expandKeys(ticked(cells[1]));
            List<String> values = ticked(cells[2]);
            if (keys.size() != values.size() || keys.stream().anyMatch(k -> k.contains("<"))) {
                continue;
            }
            for (int i = 0; i < keys.size(); i++) {
                String key = keys.get(i);
                String value = values.get(i);
                if (!DERIVED.contains(key) && !value.contains("+n") && !value.contains("<")) {
                    out.add(new Documented(key, value));
                }
            }
        }
        return out;
    }

    /**
     * The tables' shorthand: after a full key, {@code .x} is a sibling below the same parent,
     * {@code -x} replaces the first key's last dash-separated word, a bare {@code x} is a sibling.
     */
    static List<String> expandKeys(List<String> cells) {
        List<String> keys = new ArrayList<>();
        String first = null;
        for (String cell : cells) {
            if (cell.startsWith("flotilla.")) {
                keys.add(cell);
                first = first == null ? cell : first;
            } else if (first != null) {
                String parent = first.substring(0, first.lastIndexOf('.'));
                String leaf = first.substring(first.lastIndexOf('.') + 1);
                keys.add(cell.startsWith(".") ? parent + cell
                        : cell.startsWith("-") ? parent + "." + leaf.substring(0, leaf.lastIndexOf('-')) + cell
                        : parent + "." + cell);
            }
        }
        return keys;
    }

    private static List<String> ticked(String cell) {
        List<String> out = new ArrayList<>();
        Matcher m = TICKED.matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static String prefixOf(String key) {
        return RECORDS.keySet().stream().filter(p -> key.startsWith(p + ".")).findFirst()
                .orElseThrow(() -> new AssertionError(key + ": no properties record for its prefix"));
    }

    private static Object bindEmpty(String prefix) throws ClassNotFoundException {
        Class<?> type = Class.forName(RECORDS.get(prefix));
        return new Binder(new MapConfigurationPropertySource(Map.of())).bindOrCreate(prefix, type);
    }

    /** The record accessor a dotted kebab-case path ends at, and its value in {@code bound}. */
    record Setting(Method accessor, Object value) {
    }

    /** Walks {@code path} through the records below {@code bound}; null when a segment names no component. */
    private static Setting setting(Object bound, String path) throws ReflectiveOperationException {
        Class<?> type = bound.getClass();
        Object value = bound;
        Method accessor = null;
        for (String segment : path.split("\\.")) {
            if (!type.isRecord()) {
                return null;
            }
            RecordComponent component = null;
            for (RecordComponent c : type.getRecordComponents()) {
                if (c.getName().equals(camel(segment))) {
                    component = c;
                }
            }
            if (component == null) {
                return null;
            }
            accessor = component.getAccessor();
            value = value == null ? null : accessor.invoke(value);
            type = component.getType();
        }
        return new Setting(accessor, value);
    }

    private static String camel(String kebab) {
        StringBuilder b = new StringBuilder();
        boolean up = false;
        for (char c : kebab.toCharArray()) {
            if (c == '-') {
                up = true;
            } else {
                b.append(up ? Character.toUpperCase(c) : c);
                up = false;
            }
        }
        return b.toString();
    }
}
