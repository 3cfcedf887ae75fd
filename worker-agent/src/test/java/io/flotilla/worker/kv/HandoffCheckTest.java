package io.flotilla.worker.kv;

import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.BlockDescriptor;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.worker.identity.WorkerIdentity;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HandoffCheckTest {

    private static final long NOW = 1_000_000;
    private static final WorkerIdentity SELF = new WorkerIdentity("worker-1", 42, WorkerRole.WORKER_ROLE_DECODE,
            KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16, "h:7101", "h:7301", "h:8101");

    private static final GenerateRequest REQUEST = request(40);

    private static GenerateRequest request(int tokens) {
        GenerateRequest.Builder r = GenerateRequest.newBuilder().setRequestId("r");
        for (int i = 0; i < tokens; i++) {
            r.addTokenIds(i);
        }
        return r.build();
    }

    /** A handoff this worker accepts: 2 full blocks of a 40-token prompt. */
    private static KvHandoff.Builder good() {
        return KvHandoff.newBuilder().setModel("flotilla-sim").setKvLayout("bf16/bs16/paged").setBlockSize(16)
                .setSourceWorkerId("worker-0").setSourceEpoch(7).setLeaseId("7-1").setLeaseExpiryMs(NOW + 1)
                .setComputedTokens(40)
                .addBlocks(BlockDescriptor.newBuilder().setSeqHash(1))
                .addBlocks(BlockDescriptor.newBuilder().setSeqHash(2));
    }

    @Test
    void aCompatibleHandoffPasses() {
        assertThatCode(() -> HandoffCheck.check(good().build(), REQUEST, SELF, NOW)).doesNotThrowAnyException();
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                refusal("model", h -> h.setModel("other")),
                refusal("kv_layout", h -> h.setKvLayout("fp8/bs16/paged")),
                refusal("block_size", h -> h.setBlockSize(32)),
                refusal("epoch", h -> h.setSourceEpoch(0)),
                refusal("epoch", h -> h.setSourceWorkerId("")),
                refusal("epoch", h -> h.setSourceWorkerId("worker-1")),
                refusal("lease_expired", h -> h.setLeaseExpiryMs(NOW)),
                refusal("unsupported", h -> h.setEngineTransferParams("{\"remote_block_ids\":[]}")),
                refusal("prompt", h -> h.setComputedTokens(39)),
                refusal("prompt", h -> h.addBlocks(BlockDescriptor.newBuilder().setSeqHash(3))));
    }

    private static Arguments refusal(String reason, UnaryOperator<KvHandoff.Builder> change) {
        return Arguments.of(reason, change);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void anIncompatibleHandoffIsRefusedWithItsReason(String reason, UnaryOperator<KvHandoff.Builder> change) {
        KvHandoff h = change.apply(good()).build();
        assertThatThrownBy(() -> HandoffCheck.check(h, REQUEST, SELF, NOW))
                .isInstanceOfSatisfying(HandoffFailure.class, f -> org.assertj.core.api.Assertions.assertThat(f.reason())
                        .isEqualTo(reason));
    }

    /** A handoff from a worker whose engine moves KV itself: engine params, no blocks, no lease id. */
    private static KvHandoff.Builder engineNative() {
        return KvHandoff.newBuilder().setModel("flotilla-sim").setKvLayout("bf16/bs16/paged").setBlockSize(16)
                .setSourceWorkerId("worker-0").setSourceEpoch(7).setLeaseExpiryMs(NOW + 1).setComputedTokens(40)
                .setEngineTransferParams("{\"do_remote_prefill\":true,\"remote_block_ids\":[4,5],"
                        + "\"remote_engine_id\":\"e\",\"remote_host\":\"h\",\"remote_port\":5600}");
    }

    @Test
    void anEngineNativeHandoffPassesTheEngineTransferCheck() {
        assertThatCode(() -> HandoffCheck.checkEngineTransfer(engineNative().build(), REQUEST, SELF, NOW))
                .doesNotThrowAnyException();
    }

    static Stream<Arguments> engineTransferRefusals() {
        return Stream.of(
                refusal("model", h -> h.setModel("other")),
                refusal("kv_layout", h -> h.setKvLayout("fp8/bs16/paged")),
                refusal("block_size", h -> h.setBlockSize(32)),
                refusal("epoch", h -> h.setSourceEpoch(0)),
                refusal("epoch", h -> h.setSourceWorkerId("worker-1")),
                refusal("lease_expired", h -> h.setLeaseExpiryMs(NOW)),
                refusal("engine_params", h -> h.clearEngineTransferParams()),
                refusal("engine_params", h -> h.setEngineTransferParams("[1,2]")),
                refusal("engine_params", h -> h.setEngineTransferParams("{not json")),
                refusal("prompt", h -> h.setComputedTokens(41)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("engineTransferRefusals")
    void anEngineNativeHandoffThisWorkerCannotUseIsRefusedWithItsReason(String reason, UnaryOperator<KvHandoff.Builder> change) {
        KvHandoff h = change.apply(engineNative()).build();
        assertThatThrownBy(() -> HandoffCheck.checkEngineTransfer(h, REQUEST, SELF, NOW))
                .isInstanceOfSatisfying(HandoffFailure.class, f -> org.assertj.core.api.Assertions.assertThat(f.reason())
                        .isEqualTo(reason));
    }
}
