package io.flotilla.worker.api;

import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.StructuredOutput;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.SamplingOptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The worker's own guard: sampling its engine does not advertise is refused by name, and the contract maps to engine options. */
class EngineRequestsTest {

    private static final WorkerIdentity SELF = new WorkerIdentity("w-1", 1, WorkerRole.WORKER_ROLE_AGGREGATED,
            KvNamespace.of("m", "t", "bf16/bs16/paged"), 16, "e", "t", "m");
    private static final EngineCapabilities TOP_P_ONLY = EngineCapabilities.newBuilder()
            .addFeatures(SamplingFeature.SAMPLING_FEATURE_TOP_P).build();

    private static GenerateRequest request(SamplingParams sampling) {
        return GenerateRequest.newBuilder().setRequestId("r").addTokenIds(1).setSampling(sampling)
                .setStop(StopConditions.newBuilder().setMaxTokens(4).addStopStrings("END")).build();
    }

    @Test
    void aFeatureTheEngineLacksIsRefusedByName() {
        assertThat(EngineRequests.invalid(request(SamplingParams.newBuilder().setTopP(0.5f).build()), SELF, TOP_P_ONLY)).isNull();
        assertThat(EngineRequests.invalid(request(SamplingParams.newBuilder().setTopK(5).build()), SELF, TOP_P_ONLY))
                .isEqualTo("sampling.top_k is not supported by the engine of w-1");
        assertThat(EngineRequests.invalid(request(SamplingParams.newBuilder().setStructuredOutput(
                StructuredOutput.newBuilder().setJsonObject(true)).build()), SELF, TOP_P_ONLY)).contains("structured_output");
        assertThat(EngineRequests.invalid(request(SamplingParams.newBuilder().setLogprobs(true).setTopLogprobs(3).build()), SELF,
                EngineCapabilities.newBuilder().addFeatures(SamplingFeature.SAMPLING_FEATURE_LOGPROBS).setMaxTopLogprobs(2).build()))
                .contains("top_logprobs must be at most 2");
        assertThat(EngineRequests.invalid(request(SamplingParams.newBuilder().setTopLogprobs(3).build()), SELF, TOP_P_ONLY))
                .contains("needs sampling.logprobs");
        assertThat(EngineRequests.invalid(request(SamplingParams.newBuilder().putLogitBias(3, 500f).build()), SELF, TOP_P_ONLY))
                .contains("[-100, 100]");
        assertThat(EngineRequests.invalid(request(SamplingParams.getDefaultInstance()).toBuilder().setN(2)
                .setHandoff(KvHandoff.getDefaultInstance()).build(), SELF, TOP_P_ONLY)).contains("n > 1");
    }

    @Test
    void unsetFieldsStayUnsetAndSetOnesCarryOverExactly() {
        EngineRequest plain = EngineRequests.of(request(SamplingParams.getDefaultInstance()));
        assertThat(plain.options()).isEqualTo(new SamplingOptions(null, null, null, null, null, null, java.util.Map.of(),
                false, 0, null, java.util.List.of("END")));
        assertThat(plain.temperature()).as("no temperature the client did not send").isNull();
        EngineRequest set = EngineRequests.of(request(SamplingParams.newBuilder().setTemperature(0.7).setTopP(0.8).setTopK(3)
                .setMinP(0.1).setPresencePenalty(0.5).setFrequencyPenalty(0.25).setRepetitionPenalty(1.2).putLogitBias(7, -1.5)
                .setLogprobs(true).setTopLogprobs(2)
                .setStructuredOutput(StructuredOutput.newBuilder().setJsonSchema("{}").setSchemaName("s")).build()));
        SamplingOptions o = set.options();
        assertThat(set.temperature()).isEqualTo(0.7);
        assertThat(o.topP()).isEqualTo(0.8);
        assertThat(o.topK()).isEqualTo(3);
        assertThat(o.minP()).isEqualTo(0.1);
        assertThat(o.presencePenalty()).isEqualTo(0.5);
        assertThat(o.frequencyPenalty()).isEqualTo(0.25);
        assertThat(o.repetitionPenalty()).isEqualTo(1.2);
        assertThat(o.logitBias()).containsEntry(7, -1.5);
        assertThat(o.topLogprobs()).isEqualTo(2);
        assertThat(o.format()).isEqualTo(new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_SCHEMA, "{}", "s"));
        assertThat(o.stopStrings()).containsExactly("END");
    }
}
