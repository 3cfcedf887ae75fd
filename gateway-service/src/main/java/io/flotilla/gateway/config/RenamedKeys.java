package io.flotilla.gateway.config;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

import java.util.Map;

/**
 * Keys that were renamed stop the gateway with the new name, instead of being ignored: an operator's
 * {@code admission.max-in-flight=32} silently turning into the default 256 would be worse than not
 * starting.
 */
final class RenamedKeys {

    private static final Map<String, String> RENAMED = Map.of(
            "flotilla.gateway.admission", "flotilla.gateway.flow (max-in-flight, max-queued, queue-timeout, retry-after)",
            "flotilla.gateway.route-timeout", "flotilla.gateway.route-deadline.floor / .ceiling (the Route deadline is adaptive)");

    private RenamedKeys() {
    }

    static void check(Environment environment) {
        Binder binder = Binder.get(environment);
        RENAMED.forEach((old, replacement) -> {
            boolean set = environment.containsProperty(old);
            if (!set) {
                try {
                    set = binder.bind(old, Bindable.mapOf(String.class, Object.class)).map(m -> !m.isEmpty()).orElse(false);
                } catch (RuntimeException notAMap) {
                    set = true; // something is set under it
                }
            }
            if (set) {
                throw new IllegalStateException(old + " is no longer read: it became " + replacement
                        + ". Rename the setting (see gateway-service/README.md).");
            }
        });
    }
}
