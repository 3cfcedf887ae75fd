package io.flotilla.planner.it;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.planner.PlannerApplication;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.ProtoSerializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.GatewayModelLoad;
import io.flotilla.protocol.v1.PlannerDecision;
import io.flotilla.protocol.v1.RequestOutcome;
import io.flotilla.protocol.v1.RequestRecord;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Spring shell with a real broker: request records, worker heartbeats and a gateway's queue in, a decision out on
 * {@code flotilla.planner-decisions} and at {@code GET /planner/decisions}, metrics on the actuator.
 */
@ExtendWith(KafkaBrokerExtension.class)
class PlannerServiceKafkaTest {

    @Test
    void decisionsFromRequestRecords(KafkaBroker kafka) throws Exception {
        String model = "it-model-" + System.nanoTime();
        int port = KafkaBroker.freePort();
        ConfigurableApplicationContext app = new SpringApplicationBuilder(PlannerApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=" + port,
                "--flotilla.planner.model=" + model, "--flotilla.planner.interval=2s");
        Map<String, Object> conf = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, Object> producer = new KafkaProducer<>(conf, new StringSerializer(), serializer());
             KafkaConsumer<String, PlannerDecision> consumer = new KafkaConsumer<>(Map.of(
                     ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                     new StringDeserializer(), new ProtoDeserializer.PlannerDecisions())) {
            TopicPartition tp = new TopicPartition(Topics.PLANNER_DECISIONS.name(), 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            List<PlannerDecision> ours = new ArrayList<>();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
                long now = System.currentTimeMillis();
                producer.send(new ProducerRecord<>(Topics.WORKERS.name(), model + "-w0", WorkerStatus.newBuilder()
                        .setWorkerId(model + "-w0").setEpoch(1).setModel(model).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                        .setState(WorkerState.WORKER_STATE_READY).setEndpoint("127.0.0.1:1").setLeaseMs(3000).setTs(now).build()));
                for (int i = 0; i < 5; i++) {
                    String id = model + "-" + now + "-" + i;
                    producer.send(new ProducerRecord<>(Topics.REQUESTS.name(), id, RequestRecord.newBuilder().setId(id)
                            .setModel(model).setIsl(1000).setOsl(100).setTtftMs(50).setItlMs(10).setTs(now)
                            .setOutcome(RequestOutcome.REQUEST_OUTCOME_OK).build()));
                }
                producer.flush();
                consumer.poll(Duration.ofMillis(100)).forEach(r -> {
                    if (model.equals(r.key()) && r.value() != null && r.value().getObserved().getRequestRate() > 0
                            && r.value().getTargets().getAggregated() >= 1) {
                        ours.add(r.value());
                    }
                });
                return !ours.isEmpty();
            });
            PlannerDecision d = ours.get(0);
            assertThat(d.getModel()).isEqualTo(model);
            assertThat(d.getConnector()).isEqualTo("shadow");
            assertThat(d.hasApplied()).isFalse();
            assertThat(d.getObserved().getMeanIsl()).isEqualTo(1000);
            assertThat(d.getReason()).contains("aggregated");

            HttpClient http = HttpClient.newHttpClient();
            JsonNode json = JsonMapper.builder().build().readTree(http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/planner/decisions?limit=5")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            JsonNode decisions = json.get("decisions");
            assertThat(decisions.isArray()).isTrue();
            assertThat(decisions.size()).isBetween(1, 5);
            JsonNode newest = decisions.get(0);
            assertThat(newest.get("model").stringValue()).isEqualTo(model);
            assertThat(newest.get("targets").get("aggregated").asInt()).isGreaterThanOrEqualTo(1);
            assertThat(newest.get("applied").isNull()).isTrue();
            if (decisions.size() > 1) {
                assertThat(newest.get("ts").asLong()).isGreaterThan(decisions.get(1).get("ts").asLong());
            }

            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/prometheus"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).contains("flotilla_planner_predicted_requests_per_second")
                    .contains("flotilla_planner_prediction_error{").contains("flotilla_planner_target_replicas{")
                    .contains("flotilla_planner_ready_replicas{").contains("flotilla_planner_decisions_total{")
                    .contains("flotilla_planner_prediction_shortfall").contains("flotilla_planner_ready_time_seconds")
                    .containsPattern("flotilla_planner_leader\\{[^}]*} 1\\.0");
            JsonNode leader = JsonMapper.builder().build().readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/actuator/leader")).build(), HttpResponse.BodyHandlers.ofString()).body());
            assertThat(leader.get("role").stringValue()).isEqualTo("leader"); // no election: the sole planner applies
            assertThat(leader.get("election").stringValue()).isEqualTo("sole planner");
            await("the gateway's queue, read from flotilla.gateway-load").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200)).until(() -> {
                        producer.send(new ProducerRecord<>(Topics.GATEWAY_LOAD.name(), "gw-1", gatewayLoad(model)));
                        producer.flush();
                        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/prometheus"))
                                .build(), HttpResponse.BodyHandlers.ofString()).body()
                                .matches("(?s).*flotilla_planner_gateway_queued\\{[^}]*} 7\\.0.*");
                    });
        } finally {
            app.close();
        }
    }

    private static GatewayLoad gatewayLoad(String model) {
        return GatewayLoad.newBuilder().setGatewayId("gw-1").setTs(System.currentTimeMillis()).setIntervalMs(1000)
                .addModels(GatewayModelLoad.newBuilder().setModel(model).setQueued(7).setInFlight(3)).build();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static org.apache.kafka.common.serialization.Serializer<Object> serializer() {
        return (org.apache.kafka.common.serialization.Serializer) new ProtoSerializer<>();
    }
}
