package io.flotilla.kafka.boot;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.protocol.kafka.TopicAdmin;
import io.flotilla.protocol.kafka.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A broker as operators run one: SASL_PLAINTEXT with one JAAS user, auto-create off, no topics. Clients are
 * configured only through {@code spring.kafka.*}; a service creates the topics it writes with the declared
 * configs, a wrong cleanup policy stops its start naming topic and setting, and bad credentials are named as
 * an authentication failure in health instead of a service that says UP.
 */
class KafkaStatusSaslTest {

    private static final KafkaBroker.SaslUser USER = new KafkaBroker.SaslUser("flotilla", "s3cret");
    private static KafkaBroker broker;
    private static Path dir;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("flotilla-sasl-kafka-");
        broker = new KafkaBroker(KafkaBroker.Config.forTests(dir).withSasl(USER).withoutTopics()).start();
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.closeAndDelete();
        }
    }

    private static FlotillaKafkaProperties props(Duration startupWait) {
        return new FlotillaKafkaProperties(null, startupWait, Duration.ofSeconds(1), null);
    }

    private static final int KV_EVENTS_PARTITIONS = 12;

    private static KafkaClients clients(Map<String, Object> conf) {
        return new KafkaClients(conf, conf, conf);
    }

    private static Map<String, Object> withPassword(String password) {
        Map<String, Object> conf = new HashMap<>(broker.clientConfig());
        conf.put("sasl.jaas.config", new KafkaBroker.SaslUser(USER.username(), password).clientJaas());
        return conf;
    }

    @Test
    void aServiceCreatesTheTopicsItWritesWithTheirConfigsOnABrokerWithoutAutoCreate() throws Exception {
        KafkaStatus status = new KafkaStatus(clients(broker.clientConfig()),
                KafkaTopicUse.producerOnly(List.of(Topics.WORKERS, Topics.KV_EVENTS)),
                new FlotillaKafkaProperties(null, Duration.ofSeconds(30), Duration.ofSeconds(1), KV_EVENTS_PARTITIONS),
                Clock.systemUTC());
        try {
            status.start();
            assertThat(status.report().up()).as(status.report().problem()).isTrue();
            assertThat(status.report().details()).containsEntry("securityProtocol", "SASL_PLAINTEXT");
        } finally {
            status.close();
        }
        try (Admin admin = Admin.create(broker.clientConfig())) {
            var config = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, Topics.WORKERS.name())))
                    .all().get(10, TimeUnit.SECONDS).values().iterator().next();
            assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
            assertThat(config.get("segment.ms").value()).isEqualTo(Topics.WORKERS.configs().get("segment.ms"));
            assertThat(admin.describeTopics(List.of(Topics.KV_EVENTS.name())).allTopicNames().get(10, TimeUnit.SECONDS)
                    .get(Topics.KV_EVENTS.name()).partitions()).as("flotilla.kafka.kv-events-partitions")
                    .hasSize(KV_EVENTS_PARTITIONS);
            assertThat(admin.listTopics().names().get(10, TimeUnit.SECONDS))
                    .as("nothing else was created: auto-create is off").doesNotContain(Topics.REQUESTS.name());
        }
    }

    @Test
    void aWrongCleanupPolicyStopsTheStartNamingTopicAndSetting() throws Exception {
        try (Admin admin = Admin.create(broker.clientConfig())) {
            admin.createTopics(List.of(new NewTopic(Topics.PLANNER_DECISIONS.name(), 1, (short) 1)
                    .configs(Map.of("cleanup.policy", "delete")))).all().get(10, TimeUnit.SECONDS);
        }
        KafkaStatus status = new KafkaStatus(clients(broker.clientConfig()),
                KafkaTopicUse.producerOnly(List.of(Topics.PLANNER_DECISIONS)), props(Duration.ofSeconds(30)), Clock.systemUTC());
        assertThatThrownBy(status::start).isInstanceOf(TopicAdmin.TopicConfigException.class)
                .hasMessageContaining("flotilla.planner-decisions: cleanup.policy=delete (declared compact)");
    }

    @Test
    void badCredentialsAreAnAuthenticationProblemInHealthNotAStartFailure() {
        KafkaStatus status = new KafkaStatus(clients(withPassword("wrong")),
                KafkaTopicUse.producerOnly(List.of(Topics.WORKER_LOAD)), props(Duration.ofSeconds(3)), Clock.systemUTC());
        try {
            status.start();
            assertThat(status.report().up()).isFalse();
            assertThat(status.report().problem()).startsWith("authentication");
        } finally {
            status.close();
        }
    }

    /** The auto-configuration: spring.kafka.* alone configures the clients, and health names the failure. */
    @Test
    void theKafkaHealthComponentOfAServiceConfiguredOnlyBySpringKafkaProperties() {
        Map<String, String> good = broker.springProperties();
        try (ConfigurableApplicationContext ok = run(good, USER.password());
             ConfigurableApplicationContext bad = run(good, "wrong")) {
            HealthIndicator kafkaOk = ok.getBean("kafkaHealthIndicator", HealthIndicator.class);
            assertThat(kafkaOk.health(true).getStatus()).isEqualTo(Status.UP);
            assertThat(ok.getBean(KafkaClients.class).admin()).containsEntry("security.protocol", "SASL_PLAINTEXT");
            var health = bad.getBean("kafkaHealthIndicator", HealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails().get("problem").toString()).startsWith("authentication");
            assertThat(bad.getBean("kafkaStateHealthIndicator", HealthIndicator.class).health(true).getStatus())
                    .as("a service that needs state and never loaded it is not ready").isEqualTo(Status.OUT_OF_SERVICE);
        }
    }

    private static ConfigurableApplicationContext run(Map<String, String> spring, String password) {
        List<String> args = new java.util.ArrayList<>();
        spring.forEach((k, v) -> args.add("--" + k + "=" + (k.endsWith("jaas.config")
                ? new KafkaBroker.SaslUser(USER.username(), password).clientJaas() : v)));
        args.add("--spring.main.web-application-type=none");
        args.add("--flotilla.kafka.startup-check-timeout=5s");
        SpringApplication app = new SpringApplicationBuilder(TestService.class).build();
        return app.run(args.toArray(String[]::new));
    }

    @SpringBootApplication
    static class TestService {
        @Bean
        KafkaTopicUse topics() {
            return new KafkaTopicUse(List.of(Topics.ROUTER_SYNC), List.of(Topics.ROUTER_SYNC), () -> false, Map::of);
        }
    }
}
