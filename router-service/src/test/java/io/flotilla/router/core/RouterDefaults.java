package io.flotilla.router.core;

import io.flotilla.router.config.RouterProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import java.util.Map;

/**
 * The routing configuration an empty environment binds to: {@code RouterProperties}' defaults, the one
 * place they are written, so the core's tests and benchmarks run what the router runs by default.
 */
public final class RouterDefaults {

    private static final RouterConfig CONFIG = new Binder(new MapConfigurationPropertySource(Map.of()))
            .bindOrCreate("flotilla.router", RouterProperties.class).routingConfig();

    private RouterDefaults() {
    }

    public static RouterConfig config() {
        return CONFIG;
    }
}
