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
        @DefaultValue("1") @Min(1) @Max(512) int instances) {

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
