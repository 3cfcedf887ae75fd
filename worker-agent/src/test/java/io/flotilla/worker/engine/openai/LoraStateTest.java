package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.AdapterStatus;
import io.flotilla.worker.engine.InvalidRequestException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The LoRA state as tables: each row is a list of events (with the time each comes at, in ms), what each
 * answers, in order, and the status after. Two adapters fit; {@code sql}, {@code chat} and {@code code} are
 * configured, others only discovered.
 */
class LoraStateTest {

    private static final LoraSettings SETTINGS = new LoraSettings(
            Map.of("sql", "/l/sql", "chat", "/l/chat", "code", "/l/code"), 2, 700);

    private record Event(String text, Function<LoraState, String> apply) {
        @Override
        public String toString() {
            return text;
        }
    }

    private record Row(String name, List<Event> events, List<String> answers, List<String> loaded, long loads,
                       long unloads, long overcommitted) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static long ms(long ms) {
        return ms * 1_000_000L;
    }

    private static Event acquire(String adapter, long atMs) {
        return new Event("acquire " + adapter + " @" + atMs, s -> {
            try {
                LoraState.Take t = s.acquire(adapter, ms(atMs));
                return switch (t.kind()) {
                    case READY -> "ready";
                    case JOIN -> "join";
                    case LOAD -> "load " + t.path() + (t.unload() == null ? "" : " after unloading " + t.unload());
                };
            } catch (InvalidRequestException e) {
                return "refused";
            }
        });
    }

    private static Event loaded(String adapter, long atMs) {
        return new Event("loaded " + adapter + " @" + atMs, s -> {
            s.loaded(adapter, SETTINGS.paths().getOrDefault(adapter, "/m/" + adapter), 40, ms(atMs));
            return "-";
        });
    }

    private static Event release(String adapter) {
        return new Event("release " + adapter, s -> {
            s.release(adapter);
            return "-";
        });
    }

    private static Event unloaded(String adapter, long atMs) {
        return new Event("unloaded " + adapter + " @" + atMs, s -> {
            s.unloaded(adapter, ms(atMs));
            return "-";
        });
    }

    private static Event failed(String adapter) {
        return new Event("failed " + adapter, s -> {
            s.loadFailed(adapter);
            return "-";
        });
    }

    private static Event due(long atMs) {
        return new Event("discovery due? @" + atMs, s -> s.discoveryDue(ms(atMs)) ? "due" : "not due");
    }

    private static Event listed(Map<String, String> listed, long askedAtMs) {
        return new Event("listed " + listed.keySet() + " asked @" + askedAtMs,
                s -> s.listed(listed, ms(askedAtMs)) ? "changed" : "unchanged");
    }

    private static Event restarted() {
        return new Event("engine restarted", s -> {
            s.engineRestarted();
            return "-";
        });
    }

    static Stream<Row> table() {
        return Stream.of(
                new Row("a configured adapter loads on first use and concurrent requests share the load",
                        List.of(acquire("sql", 0), acquire("sql", 1), loaded("sql", 5), acquire("sql", 6)),
                        List.of("load /l/sql", "join", "-", "ready"), List.of("sql"), 1, 0, 0),
                new Row("past two, the least recently used idle adapter is unloaded first",
                        List.of(acquire("sql", 0), loaded("sql", 1), release("sql"), acquire("chat", 2), loaded("chat", 3),
                                release("chat"), acquire("sql", 4), release("sql"), acquire("code", 5), unloaded("chat", 6),
                                loaded("code", 6)),
                        List.of("load /l/sql", "-", "-", "load /l/chat", "-", "-", "ready", "-",
                                "load /l/code after unloading chat", "-", "-"), List.of("code", "sql"), 3, 1, 0),
                new Row("with every loaded adapter in use the load goes ahead, overcommitted",
                        List.of(acquire("sql", 0), loaded("sql", 1), acquire("chat", 2), loaded("chat", 3),
                                acquire("code", 4), loaded("code", 5)),
                        List.of("load /l/sql", "-", "load /l/chat", "-", "load /l/code", "-"),
                        List.of("code", "chat", "sql"), 3, 0, 1),
                new Row("an adapter neither loaded nor loadable is refused",
                        List.of(acquire("nope", 0)), List.of("refused"), List.of(), 0, 0, 0),
                new Row("a failed load is tried again by the next request",
                        List.of(acquire("sql", 0), failed("sql"), acquire("sql", 1)),
                        List.of("load /l/sql", "-", "load /l/sql"), List.of(), 0, 0, 0),
                new Row("the model list is read at most every interval; what it lists is loaded and loadable",
                        List.of(due(0), due(4_999), due(5_000), listed(Map.of("disc", "/m/disc"), 5_000),
                                acquire("disc", 5_001)),
                        List.of("due", "not due", "due", "changed", "ready"), List.of("disc"), 0, 0, 0),
                new Row("a list asked for before this worker's own load does not undo it; a later one does",
                        List.of(acquire("sql", 0), loaded("sql", 10), listed(Map.of(), 5), listed(Map.of(), 20)),
                        List.of("load /l/sql", "-", "unchanged", "changed"), List.of(), 1, 0, 0),
                new Row("a list that still shows an adapter being unloaded does not bring it back",
                        List.of(acquire("sql", 0), loaded("sql", 1), release("sql"), acquire("chat", 2), loaded("chat", 3),
                                release("chat"), acquire("code", 10), listed(Map.of("sql", "/l/sql", "chat", "/l/chat"), 11),
                                unloaded("sql", 12), listed(Map.of("sql", "/l/sql", "chat", "/l/chat"), 11),
                                listed(Map.of("chat", "/l/chat"), 13)),
                        List.of("load /l/sql", "-", "-", "load /l/chat", "-", "-", "load /l/code after unloading sql",
                                "unchanged", "-", "unchanged", "unchanged"), List.of("chat"), 2, 1, 0),
                new Row("an adapter loading is not forgotten by a list that misses it",
                        List.of(acquire("sql", 0), listed(Map.of("sql", "/l/sql"), 1), listed(Map.of(), 2)),
                        List.of("load /l/sql", "changed", "unchanged"), List.of("sql"), 0, 0, 0),
                new Row("a restarted engine's adapters are read again at once",
                        List.of(due(0), acquire("sql", 1), loaded("sql", 2), restarted(), due(3)),
                        List.of("due", "load /l/sql", "-", "-", "due"), List.of(), 1, 0, 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void answersAndStatus(Row row) {
        LoraState state = new LoraState(SETTINGS, ms(5_000));
        List<String> answers = new ArrayList<>();
        for (Event e : row.events()) {
            answers.add(e.apply().apply(state));
        }
        assertThat(answers).as(row.events().toString()).containsExactlyElementsOf(row.answers());
        AdapterStatus status = state.status();
        assertThat(status.loaded()).as("loaded, most recently used first").containsExactlyElementsOf(row.loaded());
        assertThat(status.loads()).isEqualTo(row.loads());
        assertThat(status.unloads()).isEqualTo(row.unloads());
        assertThat(state.overcommitted()).isEqualTo(row.overcommitted());
    }

    @org.junit.jupiter.api.Test
    void theAdvertisedLoadTimeIsTheMeanOfTheLastSixteenLoadsOrTheConfiguredOne() {
        LoraState state = new LoraState(SETTINGS, ms(5_000));
        assertThat(state.status().loadMs()).isEqualTo(700);
        assertThat(state.status().loadMsSource()).isEqualTo(AdapterStatus.CONFIGURED);
        state.loaded("sql", "/l/sql", 1_000, 0);
        for (int i = 0; i < 16; i++) {
            state.loaded("sql", "/l/sql", 10, i + 1);
        }
        assertThat(state.status().loadMs()).as("the first load fell out of the window").isEqualTo(10);
        assertThat(state.status().loadMsSource()).isEqualTo(AdapterStatus.MEASURED);
        assertThat(state.status().available()).containsExactly("chat", "code", "sql");
    }
}
