package io.flotilla.boot.config;

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
 * A service's renamed settings, checked at start-up: one that is still set stops the service with its new name,
 * instead of being ignored (an operator's {@code weight-queue=0} silently turning back into the default would run
 * otherwise than asked, and nothing would say so).
 *
 * <p>Every way a key can be set counts: kebab or camel case, the first element of a list, an environment variable.
 * An environment variable binds an old key and its new one alike when the two differ only in a {@code -} against a
 * {@code .} ({@code FLOTILLA_ROUTER_INDEXER_ADDRESS} is {@code indexer-address} and {@code indexer.address}): a
 * variable that sets the new key is the new key's, not an old one.
 *
 * <p>Spring Boot's properties migrator does this from configuration metadata, but it is meant to be on the
 * classpath only while migrating, and it rewrites the old key instead of refusing it; here the refusal is the point.
 */
public final class KeyRenames {

    private final String prefix;
    private final String listedIn;
    private final Map<String, String> renamed;

    private KeyRenames(String prefix, String listedIn, Map<String, String> renamed) {
        this.prefix = prefix + ".";
        this.listedIn = listedIn;
        this.renamed = renamed;
    }

    /**
     * @param prefix     the service's properties prefix, e.g. {@code flotilla.router}
     * @param listedIn   where the current keys are documented, for the message
     * @param oldThenNew pairs of an old key and the key that replaced it, below {@code prefix}
     */
    public static KeyRenames under(String prefix, String listedIn, String... oldThenNew) {
        if (oldThenNew.length % 2 != 0) {
            throw new IllegalArgumentException("renamed keys come in pairs of an old key and its replacement");
        }
        Map<String, String> renamed = new LinkedHashMap<>();
        for (int i = 0; i < oldThenNew.length; i += 2) {
            renamed.put(oldThenNew[i], oldThenNew[i + 1]);
        }
        return new KeyRenames(prefix, listedIn, renamed);
    }

    /** Fails naming every old key {@code environment} sets and the key to use instead. */
    public void check(Environment environment) {
        List<String> found = new ArrayList<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            boolean variables = source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource;
            renamed.forEach((old, replacement) -> {
                String line = prefix + old + " became " + prefix + replacement;
                if (sets(source, old) && !(variables && sets(source, replacement)) && !found.contains(line)) {
                    found.add(line);
                }
            });
        }
        if (!found.isEmpty()) {
            throw new IllegalStateException("Settings no longer read: " + String.join("; ", found)
                    + ". Rename them (" + listedIn + ").");
        }
    }

    /** Whether {@code source} has a value for the key, or for its first element when it is a list. */
    private boolean sets(ConfigurationPropertySource source, String key) {
        ConfigurationPropertyName name = ConfigurationPropertyName.of(prefix + key);
        return source.getConfigurationProperty(name) != null || source.getConfigurationProperty(name.append("[0]")) != null;
    }
}
