package io.flotilla.gateway.kube;

import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.flow.Priority;
import org.springframework.boot.convert.DurationStyle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The runtime ConfigMap's data, read whole, over the gateway's configured settings:
 * <ul>
 *   <li>{@code default-priority}: the band of requests whose flow names none;</li>
 *   <li>{@code tenants.<flow>.priority}, {@code tenants.<flow>.max-priority}, {@code tenants.<flow>.weight}: a flow's
 *       band, highest band and DRR weight, for a flow configured in {@code flotilla.gateway.flow.tenants} (the flows
 *       with their own metric tag, so the set stays bounded);</li>
 *   <li>{@code rate-limit.requests-per-period}, {@code rate-limit.period}: the per-key rate limit, on a gateway
 *       started with one.</li>
 * </ul>
 * Each version is applied over the configuration, not over the previous version: a key taken out of the ConfigMap
 * returns to its configured value. An unknown key or a bad value rejects the whole version, naming each offending
 * key, so a typo never half-changes flow control.
 *
 * @param bands the band settings to run with
 * @param rate  the rate limit to run with; empty on a gateway without one
 */
public record RuntimeSettings(FlowPolicy.Bands bands, Optional<RateLimit> rate) {

    /** @param perPeriod requests one key may start per period */
    public record RateLimit(int perPeriod, Duration period) {
    }

    private static final String TENANTS = "tenants.";
    private static final Set<String> TENANT_FIELDS = Set.of("priority", "max-priority", "weight");

    /** A ConfigMap version that cannot be applied; the message names each offending key. */
    public static final class Rejected extends IllegalArgumentException {
        public Rejected(String message) {
            super(message);
        }
    }

    /**
     * @param configured what the gateway was started with
     * @throws Rejected when any key of {@code data} is unknown or its value bad
     */
    public static RuntimeSettings parse(Map<String, String> data, RuntimeSettings configured) {
        Map<String, String> d = data == null ? Map.of() : data;
        List<String> problems = new ArrayList<>();
        Priority defaultPriority = configured.bands().defaultPriority();
        Map<String, FlowPolicy.Tenant> tenants = new HashMap<>(configured.bands().tenants());
        Integer perPeriod = null;
        Duration period = null;
        for (String key : new TreeSet<>(d.keySet())) {
            String value = d.get(key) == null ? "" : d.get(key).strip();
            if (key.equals("default-priority")) {
                Priority p = band(key, value, problems);
                defaultPriority = p == null ? defaultPriority : p;
            } else if (key.startsWith(TENANTS)) {
                tenant(key, value, tenants, problems);
            } else if (key.equals("rate-limit.requests-per-period") || key.equals("rate-limit.period")) {
                if (configured.rate().isEmpty()) {
                    problems.add(key + ": this gateway runs without a rate limit (flotilla.gateway.rate-limit."
                            + "requests-per-period is 0); it is turned on in its configuration, not at run time");
                } else if (key.equals("rate-limit.period")) {
                    period = duration(key, value, problems);
                } else {
                    perPeriod = positive(key, value, problems);
                }
            } else {
                problems.add("unknown key '" + key + "' (known: default-priority, tenants.<flow>.priority, "
                        + "tenants.<flow>.max-priority, tenants.<flow>.weight, rate-limit.requests-per-period, rate-limit.period)");
            }
        }
        Optional<RateLimit> rate = configured.rate();
        if (rate.isPresent() && problems.isEmpty()) {
            RateLimit r = new RateLimit(perPeriod == null ? rate.get().perPeriod() : perPeriod,
                    period == null ? rate.get().period() : period);
            if (r.period().toNanos() < r.perPeriod()) {
                problems.add("rate-limit: " + r.perPeriod() + " requests per " + r.period()
                        + " is more than one request per nanosecond");
            }
            rate = Optional.of(r);
        }
        if (!problems.isEmpty()) {
            throw new Rejected(String.join("; ", problems));
        }
        return new RuntimeSettings(new FlowPolicy.Bands(defaultPriority, tenants), rate);
    }

    private static void tenant(String key, String value, Map<String, FlowPolicy.Tenant> tenants, List<String> problems) {
        int dot = key.lastIndexOf('.');
        String flow = dot > TENANTS.length() ? key.substring(TENANTS.length(), dot) : "";
        String field = key.substring(dot + 1);
        if (flow.isEmpty() || !TENANT_FIELDS.contains(field)) {
            problems.add("unknown key '" + key + "' (a flow's keys: tenants.<flow>.priority, .max-priority, .weight)");
            return;
        }
        FlowPolicy.Tenant t = tenants.get(flow);
        if (t == null) {
            problems.add(key + ": flow '" + flow + "' is not in flotilla.gateway.flow.tenants (only configured flows "
                    + "can be changed at run time)");
            return;
        }
        switch (field) {
            case "priority" -> {
                Priority p = band(key, value, problems);
                tenants.put(flow, new FlowPolicy.Tenant(p == null ? t.priority() : p, t.maxPriority(), t.weight()));
            }
            case "max-priority" -> {
                Priority p = band(key, value, problems);
                tenants.put(flow, new FlowPolicy.Tenant(t.priority(), p == null ? t.maxPriority() : p, t.weight()));
            }
            default -> {
                Integer w = positive(key, value, problems);
                tenants.put(flow, new FlowPolicy.Tenant(t.priority(), t.maxPriority(), w == null ? t.weight() : w));
            }
        }
    }

    private static Priority band(String key, String value, List<String> problems) {
        Priority p = Priority.parse(value);
        if (p == null) {
            problems.add(key + ": '" + value + "' is not a band; use interactive, standard or batch");
        }
        return p;
    }

    private static Integer positive(String key, String value, List<String> problems) {
        try {
            int n = Integer.parseInt(value);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        problems.add(key + ": must be an integer >= 1, was '" + value + "'");
        return null;
    }

    private static Duration duration(String key, String value, List<String> problems) {
        try {
            Duration p = DurationStyle.detectAndParse(value);
            if (!p.isNegative() && !p.isZero()) {
                return p;
            }
        } catch (IllegalArgumentException e) {
            // reported below
        }
        problems.add(key + ": must be a positive duration (1s, 500ms, 1m), was '" + value + "'");
        return null;
    }
}
