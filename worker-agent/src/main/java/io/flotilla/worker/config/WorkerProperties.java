package io.flotilla.worker.config;

import io.flotilla.protocol.Ports;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Worker agent settings. Worker n has id {@code worker-n}, gRPC port 7100+n and transfer port 7300+n
 * unless {@code id}, {@code grpc-port} or {@code transfer-port} say otherwise. With {@code instances > 1}
 * the JVM simulates workers n, n+1, … each with its own id, ports and epoch.
 *
 * @param index          number n of the (first) worker in this JVM
 * @param id             worker id; default {@code worker-<index>}
 * @param grpcPort       WorkerService port; default 7100 + index
 * @param transferPort   KV transfer agent port; default 7300 + index
 * @param advertisedHost host name other services use to reach this worker
 * @param role           aggregated, prefill or decode
 * @param model          model served
 * @param engine         engine adapter: sim (built-in simulated engine) or openai-http
 * @param instances      simulated workers in this JVM
 * @param leaseMs        membership lease; a worker not heard from for this long leaves the worker set
 * @param heartbeatMs    interval of WorkerStatus heartbeats on flotilla.workers
 * @param loadReportMs   interval of WorkerLoad reports on flotilla.worker-load
 * @param eventBuffer    KV event batches buffered while Kafka is slow or down; beyond it batches are
 *                       dropped and the gap is repaired by the indexer from a snapshot
 * @param tokenizerId    tokenizer identity that goes into the block-hash namespace
 * @param dtype          KV cache dtype, part of the advertised kv_layout
 * @param sim            simulated engine settings
 */
@Validated
@ConfigurationProperties("flotilla.worker")
public record WorkerProperties(
        @DefaultValue("0") @Min(0) int index,
        String id,
        @Min(0) @Max(65535) Integer grpcPort,
        @Min(0) @Max(65535) Integer transferPort,
        @DefaultValue("localhost") @NotBlank String advertisedHost,
        @DefaultValue("aggregated") @Pattern(regexp = "aggregated|prefill|decode") String role,
        @DefaultValue("flotilla-sim") @NotBlank String model,
        @DefaultValue("sim") @Pattern(regexp = "sim|openai-http") String engine,
        @DefaultValue("1") @Min(1) @Max(512) int instances,
        @DefaultValue("3000") @Min(100) int leaseMs,
        @DefaultValue("1000") @Min(50) int heartbeatMs,
        @DefaultValue("250") @Min(10) int loadReportMs,
        @DefaultValue("10000") @Min(1) int eventBuffer,
        @DefaultValue("cl100k_base") @NotBlank String tokenizerId,
        @DefaultValue("bf16") @NotBlank String dtype,
        @DefaultValue Sim sim) {

    /**
     * Simulated engine settings (ARCHITECTURE "Simulated engine").
     *
     * @param blockSize      tokens per KV block
     * @param totalBlocks    KV blocks per worker
     * @param maxRunning     most sequences in the running batch
     * @param maxBatchTokens token budget per step
     * @param maxWaiting     waiting-queue bound; a full queue answers RESOURCE_EXHAUSTED
     * @param maxContext     longest prompt plus output, in tokens
     * @param kvBytesPerBlock bytes of simulated KV per block (off-heap); 0 disables payloads
     * @param speedup        simulated time runs this many times faster than the timing model
     * @param profile        optional timing-profile file (properties) overriding the coefficients
     * @param seed           seed of the engine's randomness
     */
    public record Sim(
            @DefaultValue("16") @Min(1) @Max(1024) int blockSize,
            @DefaultValue("8192") @Min(1) int totalBlocks,
            @DefaultValue("256") @Min(1) int maxRunning,
            @DefaultValue("8192") @Min(1) int maxBatchTokens,
            @DefaultValue("1024") @Min(1) int maxWaiting,
            @DefaultValue("131072") @Min(1) int maxContext,
            @DefaultValue("16384") @Min(0) int kvBytesPerBlock,
            @DefaultValue("1.0") double speedup,
            String profile,
            @DefaultValue("0") long seed) {
    }

    /** The KV layout string workers advertise and hash with, e.g. {@code bf16/bs16/paged}. */
    public String kvLayout() {
        return dtype + "/bs" + sim.blockSize() + "/paged";
    }

    /** Id of the i-th worker in this JVM (i = 0 … instances-1). */
    public String workerId(int i) {
        if (id != null && !id.isBlank()) {
            return instances == 1 ? id : id + "-" + i;
        }
        return Ports.workerId(index + i);
    }

    public int grpcPort(int i) {
        return (grpcPort != null ? grpcPort : Ports.workerGrpc(index)) + i;
    }

    public int transferPort(int i) {
        return (transferPort != null ? transferPort : Ports.workerTransfer(index)) + i;
    }
}
