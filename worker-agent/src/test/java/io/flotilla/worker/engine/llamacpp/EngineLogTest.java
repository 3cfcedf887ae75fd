package io.flotilla.worker.engine.llamacpp;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** llama.cpp's own reuse count, from the lines its server prints. */
class EngineLogTest {

    @Test
    void readsTheSlotAndTheReusedTokensOfEveryStartedPrompt() {
        List<int[]> seen = new CopyOnWriteArrayList<>();
        assertThat(EngineLog.parse("slot update_slots: id  1 | task 9 | kv cache rm [2010, end)",
                (slot, n) -> seen.add(new int[] {slot, n}))).isTrue();
        assertThat(EngineLog.parse("slot update_slots: id  1 | task 9 | prompt done, n_past = 2011, n_tokens = 1",
                (slot, n) -> seen.add(new int[] {slot, n}))).isFalse();
        assertThat(seen).singleElement().satisfies(p -> assertThat(p).containsExactly(1, 2010));
    }

    @Test
    void followsAFileFromItsEndAsTheEngineWritesIt() throws Exception {
        Path file = Files.createTempFile("engine-out", ".log");
        Files.writeString(file, "slot update_slots: id  0 | task 1 | kv cache rm [5, end)\n");
        List<int[]> seen = new CopyOnWriteArrayList<>();
        try (EngineLog log = EngineLog.open(file, (slot, n) -> seen.add(new int[] {slot, n})).orElseThrow()) {
            Files.writeString(file, "noise\nslot update_slots: id  0 | task 2 | kv cache rm [7, end)\n",
                    StandardOpenOption.APPEND);
            await().atMost(java.time.Duration.ofSeconds(5)).until(() -> seen.size() == 1);
            assertThat(seen.get(0)).as("only what was written after it opened").containsExactly(0, 7);
        }
        assertThat(EngineLog.open(Path.of("/nonexistent/engine.log"), (s, n) -> { })).isEmpty();
    }
}
