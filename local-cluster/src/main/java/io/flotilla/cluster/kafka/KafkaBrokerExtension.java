package io.flotilla.cluster.kafka;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * JUnit 5 extension giving integration tests a real Kafka broker over TCP. One broker serves the
 * whole test JVM (started on first use, stopped and deleted when the JVM's test run ends); it has
 * Flotilla's topics. Tests share it, so they use unique ids (worker ids, request ids) and read from
 * the offsets they produced at, never assume an empty topic.
 *
 * <pre>
 * &#64;ExtendWith(KafkaBrokerExtension.class)
 * class MyIT {
 *     &#64;Test void test(KafkaBroker kafka) { … kafka.bootstrapServers() … }
 * }
 * </pre>
 *
 * Spring tests use {@link #sharedBroker()} from a {@code @DynamicPropertySource}.
 */
public final class KafkaBrokerExtension implements BeforeAllCallback, ParameterResolver {

    private static final Object LOCK = new Object();
    private static KafkaBroker shared;

    /** The JVM-wide broker, started on first call. */
    public static KafkaBroker sharedBroker() {
        synchronized (LOCK) {
            if (shared == null) {
                Path dir;
                try {
                    dir = Files.createTempDirectory("flotilla-kafka-");
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                KafkaBroker broker = new KafkaBroker(KafkaBroker.Config.forTests(dir)).start();
                Runtime.getRuntime().addShutdownHook(new Thread(broker::closeAndDelete, "kafka-broker-stop"));
                shared = broker;
            }
            return shared;
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        sharedBroker();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == KafkaBroker.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return sharedBroker();
    }
}
