package io.flotilla.gateway.config;

import jakarta.validation.constraints.NotBlank;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Gateway settings.
 *
 * @param routerAddress host:port of the router's RouterService
 * @param defaultModel  model used when a request names none the gateway can resolve
 */
@Validated
@ConfigurationProperties("flotilla.gateway")
public record GatewayProperties(
        @DefaultValue("localhost:7001") @NotBlank String routerAddress,
        @DefaultValue("flotilla-sim") @NotBlank String defaultModel) {
}
