package io.flotilla.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The configuration keys one Spring Boot application reads, as its Spring configuration metadata
 * ({@code META-INF/spring-configuration-metadata.json} and
 * {@code META-INF/additional-spring-configuration-metadata.json}) lists them, and the question
 * whether an environment variable binds to one of them.
 *
 * <p>Environment variables bind by Spring Boot's relaxed rule: the variable name, lower-cased with
 * {@code _} read as {@code .}, names the key whose canonical (kebab-case) name it equals when each
 * {@code -} of the key is either dropped or read as {@code .}. So {@code SERVER_PORT} binds
 * {@code server.port}, {@code FLOTILLA_ROUTER_GRPC_PORT} and
 * {@code FLOTILLA_ROUTER_GRPCPORT} bind {@code flotilla.router.grpc-port}. A key of Map
 * type also takes any variable below it ({@code SPRING_KAFKA_PROPERTIES_X}); a key of List, Set or
 * array type also takes indexed variables ({@code SPRING_KAFKA_BOOTSTRAP_SERVERS_0}). A key whose
 * metadata says {@code deprecation.level = error} is no longer read and binds nothing.
 */
final class ConfigKeys {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Set<String> keys = new TreeSet<>();
    private final Set<String> mapKeys = new HashSet<>();
    private final Set<String> indexedKeys = new HashSet<>();
    private final Set<String> unsupported = new HashSet<>();
    private final Set<String> sources = new TreeSet<>();

    /** Adds the properties of one metadata JSON document; {@code source} names it in messages. */
    void addMetadata(String source, InputStream json) throws IOException {
        JsonNode properties = JSON.readTree(json).path("properties");
        for (JsonNode property : properties) {
            String name = property.path("name").asText();
            String type = property.path("type").asText("");
            if (name.isEmpty()) {
                continue;
            }
            if ("error".equals(property.path("deprecation").path("level").asText())) {
                unsupported.add(name);
                continue;
            }
            addKey(name, type);
        }
        sources.add(source);
    }

    /** Adds one key by hand; {@code type} is its Java type name as metadata writes it. */
    void addKey(String name, String type) {
        keys.add(name);
        if (type.startsWith("java.util.Map")) {
            mapKeys.add(name);
        } else if (type.startsWith("java.util.List") || type.startsWith("java.util.Set")
                || type.startsWith("java.util.Collection") || type.endsWith("[]")) {
            indexedKeys.add(name);
        }
    }

    /** Whether the environment variable {@code envName} binds to a key this application reads. */
    boolean bindsEnv(String envName) {
        String wanted = envName.toLowerCase(Locale.ROOT).replace('_', '.');
        for (String key : keys) {
            if (unsupported.contains(key)) {
                continue;
            }
            for (String form : envForms(key)) {
                if (wanted.equals(form)) {
                    return true;
                }
                if (mapKeys.contains(key) && wanted.startsWith(form + ".") && wanted.length() > form.length() + 1) {
                    return true;
                }
                if (indexedKeys.contains(key) && wanted.startsWith(form + ".")
                        && wanted.substring(form.length() + 1).matches("\\d+(\\..+)?")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The two lower-case, dotted spellings an environment variable may give {@code key}. */
    private static Set<String> envForms(String key) {
        String lower = key.toLowerCase(Locale.ROOT);
        return new HashSet<>(List.of(lower.replace("-", ""), lower.replace('-', '.')));
    }

    /** Whether any metadata was read: an empty catalogue would make every key look unknown. */
    boolean isEmpty() {
        return keys.isEmpty();
    }

    /** Whether {@code key} is listed verbatim (canonical name) and still supported. */
    boolean contains(String key) {
        return keys.contains(key) && !unsupported.contains(key);
    }

    /** The metadata documents read, for messages. */
    Set<String> sources() {
        return sources;
    }

    int size() {
        return keys.size();
    }
}
