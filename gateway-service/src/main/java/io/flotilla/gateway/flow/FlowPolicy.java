package io.flotilla.gateway.flow;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * Who waits how: a request's band (its {@code x-flotilla-priority} header, else its flow's configured
 * priority, else the default), its flow's DRR weight, its tenant label on metrics, and its queue
 * timeout ({@code x-flotilla-queue-timeout}, else the model's, capped by the client's own timeout).
 * A flow is an API key id or, without keys, a tenant.
 *
 * <p>The bands ({@link Bands}: the default band and each flow's settings) may be replaced at run time
 * ({@link #replace}, from the runtime ConfigMap); a request reads one version whole, and a request already
 * queued keeps the band it was given.
 */
public final class FlowPolicy {

    /**
     * Settings of one flow.
     *
     * @param priority    its band when the request names none
     * @param maxPriority the highest band its requests may ask for
     * @param weight      its DRR weight (share of the band while backlogged)
     */
    public record Tenant(Priority priority, Priority maxPriority, int weight) {
    }

    /**
     * The band settings, replaced whole.
     *
     * @param defaultPriority the band of requests whose flow names none
     * @param tenants         each configured flow's settings
     */
    public record Bands(Priority defaultPriority, Map<String, Tenant> tenants) {
        public Bands {
            tenants = Map.copyOf(tenants);
        }
    }

    private volatile Bands bands;
    private final Duration maxQueueTimeout;

    public FlowPolicy(Priority defaultPriority, Map<String, Tenant> tenants, Duration maxQueueTimeout) {
        this.bands = new Bands(defaultPriority, tenants);
        this.maxQueueTimeout = maxQueueTimeout;
    }

    public Bands bands() {
        return bands;
    }

    /** Replaces the band settings for every request that asks after this returns. */
    public void replace(Bands next) {
        this.bands = next;
    }

    /**
     * The band of a request of {@code flow}; {@link FlowRejected} ({@link FlowRejection.BadPriority}) for an
     * unknown band, ({@link FlowRejection.PriorityNotAllowed}) for one above the flow's maximum.
     */
    public Priority priority(String flow, String header) {
        Bands b = bands;
        Tenant t = b.tenants().get(flow);
        if (header == null || header.isBlank()) {
            return t != null && t.priority() != null ? t.priority() : b.defaultPriority();
        }
        Priority asked = Priority.parse(header);
        if (asked == null) {
            throw new FlowRejected(null, new FlowRejection.BadPriority(header));
        }
        Priority max = t == null || t.maxPriority() == null ? Priority.INTERACTIVE : t.maxPriority();
        if (asked.higherThan(max)) {
            throw new FlowRejected(null, new FlowRejection.PriorityNotAllowed(flow, max, asked));
        }
        return asked;
    }

    public long weight(String flow) {
        Tenant t = bands.tenants().get(flow);
        return t == null ? 1 : Math.max(1, t.weight());
    }

    /** The tenant tag of {@code flow} on metrics: itself when configured, else {@code other}. */
    public String label(String flow) {
        return bands.tenants().containsKey(flow) ? flow : FlowMetrics.OTHER;
    }

    /**
     * How long a request may wait: {@code header} when given, else {@code modelDefault}; at most the
     * client's own timeout ({@code x-stainless-timeout}, seconds) when it sent one.
     */
    public Duration queueTimeout(String header, Duration modelDefault, String clientTimeout) {
        Duration timeout = modelDefault;
        if (header != null && !header.isBlank()) {
            timeout = parse("x-flotilla-queue-timeout", header);
            if (timeout.compareTo(maxQueueTimeout) > 0) {
                throw new FlowRejected(null, new FlowRejection.QueueTimeoutTooLong(header, maxQueueTimeout));
            }
        }
        if (clientTimeout != null && !clientTimeout.isBlank()) {
            try {
                double s = Double.parseDouble(clientTimeout.strip());
                if (s > 0 && Double.isFinite(s)) {
                    timeout = min(timeout, Duration.ofMillis((long) (s * 1000)));
                }
            } catch (NumberFormatException ignored) {
                // an SDK header we do not own: a malformed one does not fail the request
            }
        }
        return timeout;
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}, {@code 1h} or bare seconds ({@code 1.5}); {@link FlowRejection.BadDuration} otherwise. */
    static Duration parse(String header, String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        double unitMs = 1000;
        String number = v;
        if (v.endsWith("ms")) {
            unitMs = 1;
            number = v.substring(0, v.length() - 2);
        } else if (v.endsWith("s")) {
            number = v.substring(0, v.length() - 1);
        } else if (v.endsWith("m")) {
            unitMs = 60_000;
            number = v.substring(0, v.length() - 1);
        } else if (v.endsWith("h")) {
            unitMs = 3_600_000;
            number = v.substring(0, v.length() - 1);
        }
        try {
            double ms = Double.parseDouble(number.strip()) * unitMs;
            if (ms >= 0 && Double.isFinite(ms)) {
                return Duration.ofNanos(Math.round(ms * 1e6));
            }
        } catch (NumberFormatException ignored) {
            // answered below
        }
        throw new FlowRejected(null, new FlowRejection.BadDuration(header, value));
    }
}
