package io.flotilla.router.kube;

import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.Strategy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The settings of the runtime ConfigMap's data, read whole: {@code mode} ({@code kv}, {@code load},
 * {@code round-robin}, {@code random}) and {@code weights.prefill}, {@code weights.decode}, {@code weights.queue}
 * (each ≥ 0). A key left out keeps what the router runs with (weights left out keep their current value).
 * Any unknown key or bad value rejects the whole version of the ConfigMap, naming the key: nothing of it is
 * applied, so a typo never half-changes routing.
 *
 * @param mode    the routing mode to switch to, if set
 * @param prefill w_prefill, if set
 * @param decode  w_decode, if set
 * @param queue   w_queue, if set
 */
public record RuntimeSettings(Optional<Strategy> mode, Optional<Double> prefill, Optional<Double> decode,
                              Optional<Double> queue) {

    public static final Set<String> KEYS = Set.of("mode", "weights.prefill", "weights.decode", "weights.queue");

    /** A ConfigMap version that cannot be applied; the message names each offending key. */
    public static final class Rejected extends IllegalArgumentException {
        public Rejected(String message) {
            super(message);
        }
    }

    public static RuntimeSettings parse(Map<String, String> data) {
        Map<String, String> d = data == null ? Map.of() : data;
        List<String> problems = new ArrayList<>();
        d.keySet().stream().filter(k -> !KEYS.contains(k)).sorted()
                .forEach(k -> problems.add("unknown key '" + k + "' (known: mode, weights.prefill, weights.decode, weights.queue)"));
        Optional<Strategy> mode = Optional.empty();
        if (d.containsKey("mode")) {
            try {
                mode = Optional.of(Strategy.parse(d.get("mode").trim()));
            } catch (IllegalArgumentException e) {
                problems.add("mode: " + e.getMessage());
            }
        }
        Optional<Double> prefill = weight(d, "weights.prefill", problems);
        Optional<Double> decode = weight(d, "weights.decode", problems);
        Optional<Double> queue = weight(d, "weights.queue", problems);
        if (!problems.isEmpty()) {
            throw new Rejected(String.join("; ", problems));
        }
        return new RuntimeSettings(mode, prefill, decode, queue);
    }

    private static Optional<Double> weight(Map<String, String> d, String key, List<String> problems) {
        if (!d.containsKey(key)) {
            return Optional.empty();
        }
        try {
            double w = Double.parseDouble(d.get(key).trim());
            if (!(w >= 0) || Double.isInfinite(w)) {
                problems.add(key + ": must be a number >= 0, was '" + d.get(key) + "'");
                return Optional.empty();
            }
            return Optional.of(w);
        } catch (NumberFormatException e) {
            problems.add(key + ": must be a number >= 0, was '" + d.get(key) + "'");
            return Optional.empty();
        }
    }

    /** The weights these settings give, with {@code current}'s for those left out; empty when none is set. */
    public Optional<RouterConfig.Weights> weights(RouterConfig.Weights current) {
        if (prefill.isEmpty() && decode.isEmpty() && queue.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new RouterConfig.Weights(prefill.orElse(current.prefill()), decode.orElse(current.decode()),
                queue.orElse(current.queue())));
    }
}
