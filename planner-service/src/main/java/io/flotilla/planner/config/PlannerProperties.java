package io.flotilla.planner.config;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Planner settings.
 *
 * @param connector how decisions are applied: shadow (record only), local or kubernetes
 * @param namespace Kubernetes namespace of the worker Deployments (kubernetes connector)
 */
@Validated
@ConfigurationProperties("flotilla.planner")
public record PlannerProperties(
        @DefaultValue("shadow") @Pattern(regexp = "shadow|local|kubernetes") String connector,
        @DefaultValue("flotilla") @NotBlank String namespace) {
}
