package io.flotilla.router.config;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Keys that moved into groups stop the router with their new names, instead of being ignored: an operator's
 * {@code weight-queue=0} silently turning back into the default 1 would route otherwise than asked, and
 * nothing would say so.
 *
 * <p>An environment variable binds an old key and its new one alike when the two differ only in a {@code -}
 * against a {@code .} ({@code FLOTILLA_ROUTER_INDEXER_ADDRESS} is {@code indexer-address} and
 * {@code indexer.address}): a variable that sets the new key is the new key's, not an old one.
 */
final class RenamedKeys {

    private static final String PREFIX = "flotilla.router.";

    /** Old key → the key that replaced it, below {@code flotilla.router}. */
    private static final Map<String, String> RENAMED = pairs(
            "indexer-address", "indexer.address",
            "indexer-addresses", "indexer.addresses",
            "indexer-deadline", "indexer.deadline.fixed",
            "indexer-deadline-min", "indexer.deadline.min",
            "indexer-deadline-max", "indexer.deadline.max",
            "indexer-deadline-quantile", "indexer.deadline.quantile",
            "indexer-deadline-margin", "indexer.deadline.margin",
            "indexer-deadline-window", "indexer.deadline.window",
            "weight-prefill", "weights.prefill",
            "weight-decode", "weights.decode",
            "weight-queue", "weights.queue",
            "busy-prefill-fraction", "busy.prefill-fraction",
            "busy-decode-fraction", "busy.decode-fraction",
            "sequence-ttl", "sequences.ttl",
            "approx-ttl", "sequences.approx-ttl",
            "capacity-coalesce", "capacity.coalesce",
            "capacity-heartbeat", "capacity.heartbeat",
            "candidate-pruning", "candidates.pruning",
            "candidate-least-loaded", "candidates.least-loaded");

    private RenamedKeys() {
    }

    /** Fails naming every old key {@code environment} sets and the key to use instead. */
    static void check(Environment environment) {
        List<String> found = new ArrayList<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            boolean variables = source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource;
            RENAMED.forEach((old, replacement) -> {
                String line = PREFIX + old + " became " + PREFIX + replacement;
                if (sets(source, old) && !(variables && sets(source, replacement)) && !found.contains(line)) {
                    found.add(line);
                }
            });
        }
        if (!found.isEmpty()) {
            throw new IllegalStateException("Settings no longer read: " + String.join("; ", found)
                    + ". Rename them (docs/configuration.md lists the router's keys).");
        }
    }

    /** Whether {@code source} has a value for the key, or for its first element when it is a list. */
    private static boolean sets(ConfigurationPropertySource source, String key) {
        ConfigurationPropertyName name = ConfigurationPropertyName.of(PREFIX + key);
        return source.getConfigurationProperty(name) != null || source.getConfigurationProperty(name.append("[0]")) != null;
    }

    private static Map<String, String> pairs(String... oldThenNew) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < oldThenNew.length; i += 2) {
            out.put(oldThenNew[i], oldThenNew[i + 1]);
        }
        return out;
    }
}
