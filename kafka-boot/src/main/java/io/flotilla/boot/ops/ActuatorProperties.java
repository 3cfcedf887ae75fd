package io.flotilla.boot.ops;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Who may use a service's actuator write operations ({@code POST /actuator/router}, {@code POST
 * /actuator/kvindex/rebuild}, any other {@code @WriteOperation} or {@code @DeleteOperation}).
 *
 * @param writeKey the key a caller presents ({@code Authorization: Bearer KEY}); unset: only callers on this machine
 *                 (a loopback address) may write, every other caller is refused with 403. Reads are never guarded
 */
@ConfigurationProperties("flotilla.actuator")
public record ActuatorProperties(String writeKey) {

    public ActuatorProperties {
        writeKey = writeKey == null || writeKey.isBlank() ? null : writeKey;
    }
}
