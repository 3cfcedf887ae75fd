package io.flotilla.router.epp;

import java.util.List;

/** The picker's answer for one request; the ext_proc stream turns it into Envoy's messages. */
public sealed interface Pick {

    /**
     * Routed and booked under {@code requestId} (released when the response ends or the stream goes).
     *
     * @param endpoints the picked endpoint first, then the fallbacks ({@code ip:port} each)
     */
    record Routed(String requestId, String workerId, List<String> endpoints) implements Pick {
        public Routed {
            endpoints = List.copyOf(endpoints);
        }

        /** The value of the destination header and metadata: every endpoint, comma-separated. */
        public String destination() {
            return String.join(",", endpoints);
        }
    }

    /** A request without a body (no model, no prompt): sent to a live worker in turn, nothing booked. */
    record Unbooked(String endpoint) implements Pick {
    }

    /** Answered here with an HTTP status (an ImmediateResponse); nothing booked. */
    record Refused(int status, String type, String message, long retryAfterMs) implements Pick {
    }

    /** Fail-open: the picker could not pick, the pool says to let the proxy pick instead; nothing booked. */
    record PassThrough(String reason) implements Pick {
    }
}
