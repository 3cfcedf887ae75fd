package io.flotilla.worker.engine.llamacpp;

import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.SamplingOptions;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What llama.cpp is asked: the client's fields as it wrote them, and none it did not send. */
class LlamaParamsTest {

    @Test
    void unsetSamplingFieldsAreLeftToTheEngine() {
        Map<String, String> json = LlamaCppEngine.params(new EngineRequest("r", new int[] {5, 6}, 4, null, false, null,
                null, null, SamplingOptions.DEFAULT), 1);
        assertThat(json).containsOnlyKeys("prompt", "id_slot", "cache_prompt", "n_predict");
        assertThat(json).containsEntry("prompt", "[5,6]").containsEntry("id_slot", "1").containsEntry("n_predict", "4");
    }

    @Test
    void setFieldsArriveWithTheClientsValues() {
        SamplingOptions o = new SamplingOptions(0.7, 7, 0.05, 0.1, -0.3, 1.1, Map.of(17, 2.5), false, 0,
                new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_OBJECT, "", ""), List.of());
        Map<String, String> json = LlamaCppEngine.params(new EngineRequest("r", new int[] {5}, 4, null, true, 0.3,
                (1L << 40) + 9, null, o), 0);
        assertThat(json).containsEntry("temperature", "0.3").containsEntry("top_p", "0.7").containsEntry("top_k", "7")
                .containsEntry("min_p", "0.05").containsEntry("presence_penalty", "0.1")
                .containsEntry("frequency_penalty", "-0.3").containsEntry("repeat_penalty", "1.1")
                .containsEntry("logit_bias", "[[17,2.5]]").containsEntry("ignore_eos", "true")
                .containsEntry("seed", "9").containsEntry("json_schema", "{\"type\":\"object\"}");
    }
}
