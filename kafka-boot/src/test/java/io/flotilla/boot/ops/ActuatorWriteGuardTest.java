package io.flotilla.boot.ops;

import io.flotilla.boot.ops.ActuatorWriteGuard.Decision;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/** Who may write through the actuator, as a table, and the filter's answers over a mock exchange. */
class ActuatorWriteGuardTest {

    private static final InetSocketAddress LOOPBACK = new InetSocketAddress("127.0.0.1", 50000);
    private static final InetSocketAddress REMOTE = new InetSocketAddress("10.1.2.3", 50000);

    @Test
    void withoutAKeyOnlyLoopbackCallersWrite() {
        ActuatorWriteGuard guard = new ActuatorWriteGuard("/actuator", null);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", LOOPBACK, null)).isEqualTo(Decision.PASS);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", new InetSocketAddress("::1", 1), null))
                .isEqualTo(Decision.PASS);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", REMOTE, null)).isEqualTo(Decision.FORBIDDEN);
        assertThat(guard.decide(HttpMethod.DELETE, "/actuator/kvindex", REMOTE, null)).isEqualTo(Decision.FORBIDDEN);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/kvindex/rebuild", null, null))
                .as("an unknown caller is a remote one").isEqualTo(Decision.FORBIDDEN);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", REMOTE, "Bearer anything"))
                .as("no key configured: no key opens it").isEqualTo(Decision.FORBIDDEN);
    }

    @Test
    void withAKeyEveryCallerPresentsIt() {
        ActuatorWriteGuard guard = new ActuatorWriteGuard("/actuator/", "s3cret");
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", REMOTE, "Bearer s3cret")).isEqualTo(Decision.PASS);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", REMOTE, "Bearer s3cre")).isEqualTo(Decision.UNAUTHORIZED);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", REMOTE, "s3cret")).isEqualTo(Decision.UNAUTHORIZED);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", REMOTE, null)).isEqualTo(Decision.UNAUTHORIZED);
        assertThat(guard.decide(HttpMethod.POST, "/actuator/router", LOOPBACK, null))
                .as("with a key, loopback callers present it too").isEqualTo(Decision.UNAUTHORIZED);
    }

    @Test
    void readsAndOtherPathsAreNotGuarded() {
        ActuatorWriteGuard guard = new ActuatorWriteGuard("/actuator", "s3cret");
        assertThat(guard.decide(HttpMethod.GET, "/actuator/router", REMOTE, null)).isEqualTo(Decision.PASS);
        assertThat(guard.decide(HttpMethod.HEAD, "/actuator/health", REMOTE, null)).isEqualTo(Decision.PASS);
        assertThat(guard.decide(HttpMethod.POST, "/v1/chat/completions", REMOTE, null)).isEqualTo(Decision.PASS);
        assertThat(guard.decide(HttpMethod.POST, "/actuatorx", REMOTE, null)).isEqualTo(Decision.PASS);
        assertThat(guard.decide(HttpMethod.POST, "/actuator", REMOTE, null)).isEqualTo(Decision.UNAUTHORIZED);
    }

    @Test
    void theFilterAnswers401Or403AndPassesTheRestOn() {
        ActuatorWriteGuard keyed = new ActuatorWriteGuard("/actuator", "s3cret");
        assertThat(run(keyed, MockServerHttpRequest.post("/actuator/router").remoteAddress(REMOTE).build()))
                .isEqualTo(HttpStatus.UNAUTHORIZED);
        assertThat(run(keyed, MockServerHttpRequest.post("/actuator/router").remoteAddress(REMOTE)
                .header("Authorization", "Bearer s3cret").build())).isNull();
        ActuatorWriteGuard open = new ActuatorWriteGuard("/actuator", null);
        assertThat(run(open, MockServerHttpRequest.post("/actuator/router").remoteAddress(REMOTE).build()))
                .isEqualTo(HttpStatus.FORBIDDEN);
    }

    /** The status the guard set, or null when it passed the exchange on (checked: the chain ran). */
    private static HttpStatus run(ActuatorWriteGuard guard, MockServerHttpRequest request) {
        MockServerWebExchange exchange = MockServerWebExchange.from(request);
        AtomicBoolean passed = new AtomicBoolean();
        guard.filter(exchange, e -> {
            passed.set(true);
            return Mono.empty();
        }).block();
        if (passed.get()) {
            assertThat(exchange.getResponse().getStatusCode()).isNull();
            return null;
        }
        return HttpStatus.resolve(exchange.getResponse().getStatusCode().value());
    }
}
