package io.flotilla.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Relaxed binding of environment variables to configuration keys, as {@link ConfigKeys} decides it. */
class ConfigKeysTest {

    private static ConfigKeys keys() throws IOException {
        ConfigKeys keys = new ConfigKeys();
        String json = """
                {"properties": [
                  {"name": "server.port", "type": "java.lang.Integer"},
                  {"name": "flotilla.router.grpc-port", "type": "java.lang.Integer"},
                  {"name": "spring.kafka.bootstrap-servers", "type": "java.util.List<java.lang.String>"},
                  {"name": "spring.kafka.properties", "type": "java.util.Map<java.lang.String,java.lang.String>"},
                  {"name": "spring.kafka.ssl.keystore-location", "type": "java.lang.String",
                   "deprecation": {"level": "error", "replacement": "spring.kafka.ssl.key-store-location"}}
                ]}""";
        keys.addMetadata("test", new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)));
        return keys;
    }

    @Test
    void dashesMayBeUnderscoresOrDropped() throws IOException {
        assertThat(keys().bindsEnv("SERVER_PORT")).isTrue();
        assertThat(keys().bindsEnv("FLOTILLA_ROUTER_GRPC_PORT")).isTrue();
        assertThat(keys().bindsEnv("FLOTILLA_ROUTER_GRPCPORT")).isTrue();
        assertThat(keys().bindsEnv("SPRING_KAFKA_BOOTSTRAP_SERVERS")).isTrue();
    }

    @Test
    void mapKeysTakeSubKeysAndListKeysTakeIndexes() throws IOException {
        assertThat(keys().bindsEnv("SPRING_KAFKA_PROPERTIES_SECURITY_PROTOCOL")).isTrue();
        assertThat(keys().bindsEnv("SPRING_KAFKA_BOOTSTRAP_SERVERS_0")).isTrue();
        assertThat(keys().bindsEnv("SPRING_KAFKA_BOOTSTRAP_SERVERS_X")).isFalse();
        assertThat(keys().bindsEnv("SERVER_PORT_0")).isFalse();
    }

    @Test
    void misspelledPrefixedAndRemovedKeysBindNothing() throws IOException {
        assertThat(keys().bindsEnv("FLOTILLA_ROUTER_GRCP_PORT")).isFalse();
        assertThat(keys().bindsEnv("FLOTILLA_ROUTER_GRPC")).isFalse();
        assertThat(keys().bindsEnv("SERVER")).isFalse();
        assertThat(keys().bindsEnv("SPRING_KAFKA_SSL_KEYSTORE_LOCATION")).isFalse();
    }
}
