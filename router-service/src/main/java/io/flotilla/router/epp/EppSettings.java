package io.flotilla.router.epp;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

import java.util.Map;

/**
 * The router as a Gateway API Inference Extension endpoint picker ({@code flotilla.router.epp.*}).
 *
 * @param enabled          serve Envoy's {@code ext_proc} v3 protocol on {@code port}
 * @param port             port of the ext_proc gRPC server (the InferencePool's {@code endpointPickerRef.port})
 * @param targetPort       the model server's HTTP port on each worker's host: the picked endpoint is the host the
 *                         worker registered (its pod IP on Kubernetes) and this port (the pool's {@code targetPorts});
 *                         0 answers the worker's registered endpoint as it is
 * @param failureMode      what the pool declares ({@code FailClose} or {@code FailOpen}): when the picker cannot pick
 *                         (no eligible worker, every worker busy, an internal error), FailClose answers 503 (429 when
 *                         busy) and FailOpen lets the request through without a destination, for the proxy to pick
 * @param maxBody          request bodies larger than this are answered 413
 * @param fallbacks        endpoints after the picked one in the destination list, cheapest first
 * @param defaultMaxTokens expected output tokens for load accounting when the body names no {@code max_tokens}
 * @param objectives       priority of each InferenceObjective by name ({@code x-gateway-inference-objective});
 *                         below 0 is sheddable: dropped with 429 when every worker is busy, whatever the failure mode
 */
public record EppSettings(
        @DefaultValue("false") boolean enabled,
        @DefaultValue("9002") @Min(0) @Max(65535) int port,
        @DefaultValue("8000") @Min(0) @Max(65535) int targetPort,
        @DefaultValue("FailClose") @Pattern(regexp = "FailClose|FailOpen") String failureMode,
        @DefaultValue("4MB") DataSize maxBody,
        @DefaultValue("2") @Min(0) @Max(16) int fallbacks,
        @DefaultValue("256") @Min(1) int defaultMaxTokens,
        Map<String, Integer> objectives) {

    public EppSettings {
        objectives = objectives == null ? Map.of() : Map.copyOf(objectives);
    }

    public boolean failOpen() {
        return failureMode.equals("FailOpen");
    }

    /** The priority of {@code objective} (0 for none or an unknown one). */
    public int priority(String objective) {
        return objective == null ? 0 : objectives.getOrDefault(objective, 0);
    }
}
