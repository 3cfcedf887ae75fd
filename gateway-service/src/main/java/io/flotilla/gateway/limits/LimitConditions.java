package io.flotilla.gateway.limits;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** When the limits' beans exist, from their settings in any relaxed spelling. */
public final class LimitConditions {

    private LimitConditions() {
    }

    /** {@code flotilla.gateway.rate-limit.requests-per-period} is positive. */
    public static final class RateLimit implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return Binder.get(context.getEnvironment()).bind("flotilla.gateway.rate-limit.requests-per-period", Integer.class)
                    .map(n -> n > 0).orElse(false);
        }
    }

    /** {@code flotilla.gateway.limits.redis-uri} names a store. */
    public static final class Store implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return Binder.get(context.getEnvironment()).bind("flotilla.gateway.limits.redis-uri", String.class)
                    .map(s -> !s.isBlank()).orElse(false);
        }
    }
}
