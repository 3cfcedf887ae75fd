package io.flotilla.worker.agent;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.ClearKvCacheRequest;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.KvSnapshotRequest;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.worker.WorkerApplication;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The worker agent against a real Kafka broker and over real gRPC: what it serves, and what it
 * publishes on the three topics.
 */
@ExtendWith(KafkaBrokerExtension.class)
class WorkerAgentKafkaTest {

    @Test
    void servesGenerateAndPublishesMembershipLoadAndKvEvents(KafkaBroker kafka) throws Exception {
        String workerId = "it-worker-" + System.nanoTime();
        int grpcPort = KafkaBroker.freePort();
        int mgmtPort = KafkaBroker.freePort();
        Map<TopicPartition, Long> start = endOffsets(kafka);

        long epoch1;
        try (ConfigurableApplicationContext ctx = startWorker(kafka, workerId, grpcPort, mgmtPort)) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build();
            try {
                var stub = WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, java.util.concurrent.TimeUnit.SECONDS);
                int[] prompt = new int[100];
                for (int i = 0; i < prompt.length; i++) {
                    prompt[i] = 1000 + i;
                }
                Result first = generate(stub, "r1", prompt, 8);
                assertThat(first.tokens).hasSize(8);
                assertThat(first.last.getFinishReason()).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
                assertThat(first.last.getUsage().getPromptTokens()).isEqualTo(100);
                assertThat(first.last.getUsage().getCachedTokens()).isZero();
                assertThat(first.last.getWorkerId()).isEqualTo(workerId);

                Result second = generate(stub, "r2", prompt, 8);
                assertThat(second.last.getUsage().getCachedTokens()).as("6 full blocks of 16 are reused").isEqualTo(96);
                assertThat(second.tokens).hasSize(8);

                // n = 3: one Generate, three choices; the later two start from the prompt choice 0 cached.
                GenerateRequest.Builder three = GenerateRequest.newBuilder().setRequestId("r-n").setN(3)
                        .setSampling(SamplingParams.newBuilder().setTemperature(1).setSeed(5)
                                .setLogprobs(true).setTopLogprobs(2))
                        .setStop(StopConditions.newBuilder().setMaxTokens(4).setIgnoreEos(true));
                for (int i = 0; i < 100; i++) {
                    three.addTokenIds(5000 + i);
                }
                Map<Integer, List<Integer>> byChoice = new java.util.TreeMap<>();
                Map<Integer, GenerateChunk> lastOf = new java.util.TreeMap<>();
                stub.generate(three.build()).forEachRemaining(c -> {
                    byChoice.computeIfAbsent(c.getChoice(), k -> new ArrayList<>()).addAll(c.getTokenIdsList());
                    assertThat(c.getLogprobsCount()).isEqualTo(c.getTokenIdsCount());
                    if (c.hasUsage()) {
                        lastOf.put(c.getChoice(), c);
                    }
                });
                assertThat(byChoice.keySet()).containsExactly(0, 1, 2);
                assertThat(byChoice.values()).allSatisfy(t -> assertThat(t).hasSize(4));
                assertThat(new HashSet<>(byChoice.values())).as("seed + i: three different samples").hasSize(3);
                assertThat(lastOf.get(0).getUsage().getCachedTokens()).isZero();
                assertThat(lastOf.get(1).getUsage().getCachedTokens()).as("prefix computed once").isEqualTo(96);
                assertThat(lastOf.get(2).getUsage().getCachedTokens()).isEqualTo(96);
                assertThatThrownBy(() -> stub.generate(GenerateRequest.newBuilder().setRequestId("r-b").addTokenIds(1)
                        .setSampling(SamplingParams.newBuilder().putLogitBias(900_000, 1f))
                        .setStop(StopConditions.newBuilder().setMaxTokens(1)).build()).next())
                        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                            assertThat(e.getStatus().getDescription()).contains("logit_bias");
                        });

                assertThatThrownBy(() -> generate(stub, "r3", new int[0], 4))
                        .isInstanceOfSatisfying(StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
                assertThatThrownBy(() -> generate(stub, "r4", new int[]{1, 2, -1}, 4))
                        .isInstanceOfSatisfying(StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
                assertThatThrownBy(() -> stub.generate(GenerateRequest.newBuilder().setRequestId("r5").setModel("other")
                        .addTokenIds(1).setStop(StopConditions.newBuilder().setMaxTokens(1)).build()).next())
                        .isInstanceOfSatisfying(StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getDescription()).contains("is not served by"));

                // An aggregated worker has no transfer side: no Prefill, and a handoff is prefilled locally.
                assertThatThrownBy(() -> stub.prefill(PrefillRequest.newBuilder().setRequestId("p1").addTokenIds(1).build()))
                        .isInstanceOfSatisfying(StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
                GenerateRequest.Builder withHandoff = GenerateRequest.newBuilder().setRequestId("r6")
                        .setSampling(SamplingParams.newBuilder().setTemperature(0))
                        .setStop(StopConditions.newBuilder().setMaxTokens(8).setIgnoreEos(true))
                        .setHandoff(KvHandoff.newBuilder().setSourceWorkerId("elsewhere").setSourceEpoch(1));
                for (int t : prompt) {
                    withHandoff.addTokenIds(t);
                }
                List<GenerateChunk> chunks = new ArrayList<>();
                stub.generate(withHandoff.build()).forEachRemaining(chunks::add);
                assertThat(chunks.get(chunks.size() - 1).getHandoffRefusedReason()).contains("unsupported");
                assertThat(chunks.stream().flatMap(c -> c.getTokenIdsList().stream()).toList()).isEqualTo(first.tokens);

                KvSnapshot snapshot = stub.getKvSnapshot(KvSnapshotRequest.getDefaultInstance());
                assertThat(snapshot.getWorkerId()).isEqualTo(workerId);
                assertThat(snapshot.getSeqHashesCount()).isGreaterThanOrEqualTo(6);
                epoch1 = snapshot.getEpoch();

                // What the snapshot says must equal the replay of every KV event up to its seq.
                List<KvEventBatch> batches = read(kafka, Topics.KV_EVENTS.name(), start, new ProtoDeserializer.KvEventBatches(),
                        workerId, list -> list.stream().anyMatch(b -> b.getSeq() == snapshot.getSeq()));
                assertThat(batches).allMatch(b -> b.getEpoch() == epoch1);
                for (int i = 0; i < batches.size(); i++) {
                    assertThat(batches.get(i).getSeq()).as("seq continuity").isEqualTo(i + 1);
                }
                Set<Long> replayed = replay(batches.stream().filter(b -> b.getSeq() <= snapshot.getSeq()).toList());
                assertThat(replayed).containsExactlyInAnyOrderElementsOf(snapshot.getSeqHashesList());

                int cleared = stub.clearKvCache(ClearKvCacheRequest.getDefaultInstance()).getBlocksCleared();
                assertThat(cleared).isEqualTo(snapshot.getSeqHashesCount());

                List<WorkerLoad> loads = read(kafka, Topics.WORKER_LOAD.name(), start, new ProtoDeserializer.WorkerLoads(),
                        workerId, list -> list.stream().anyMatch(l -> l.getIndexDigest().getCount() > 0));
                assertThat(loads).allMatch(l -> l.getEpoch() == epoch1 && l.getTotalKvBlocks() == 512);

                String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + mgmtPort + "/actuator/prometheus")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                assertThat(metrics).contains("flotilla_worker_prefix_hit_tokens_total{")
                        .contains("flotilla_worker_running_requests{").contains("flotilla_worker_kv_usage_ratio{")
                        .contains("flotilla_worker_prefill_tokens_total{").contains("flotilla_worker_step_seconds_count{")
                        .contains("flotilla_worker_kv_events_dropped_total{");
                assertThat(metricValue(metrics, "flotilla_worker_prefix_hit_tokens_total", workerId)).as("r2, choices 1 and 2 of r-n, r6").isEqualTo(384.0);
            } finally {
                channel.shutdownNow();
            }
        }

        List<WorkerStatus> statuses = read(kafka, Topics.WORKERS.name(), start, new ProtoDeserializer.WorkerStatuses(),
                workerId, list -> !list.isEmpty() && list.get(list.size() - 1).getState() == WorkerState.WORKER_STATE_STOPPED);
        assertThat(statuses).extracting(WorkerStatus::getState).contains(WorkerState.WORKER_STATE_READY);
        assertThat(statuses.get(statuses.size() - 1).getCapabilities().getFeaturesList())
                .as("the simulated engine's sampling features go out with membership")
                .contains(SamplingFeature.SAMPLING_FEATURE_TOP_P, SamplingFeature.SAMPLING_FEATURE_LOGPROBS,
                        SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA);
        assertThat(statuses.get(statuses.size() - 1).getState()).isEqualTo(WorkerState.WORKER_STATE_STOPPED);
        assertThat(statuses).allMatch(s -> s.getEpoch() == epoch1 && s.getLeaseMs() == 3000 && s.getBlockSize() == 16
                && s.getEndpoint().equals("127.0.0.1:" + grpcPort) && s.getKvLayout().equals("bf16/bs16/paged"));

        // A restart is a new epoch.
        Map<TopicPartition, Long> restartAt = endOffsets(kafka);
        try (ConfigurableApplicationContext ignored = startWorker(kafka, workerId, grpcPort, mgmtPort)) {
            List<WorkerStatus> again = read(kafka, Topics.WORKERS.name(), restartAt, new ProtoDeserializer.WorkerStatuses(),
                    workerId, list -> !list.isEmpty());
            assertThat(again.get(0).getEpoch()).isNotEqualTo(epoch1);
            assertThat(again.get(0).getState()).isEqualTo(WorkerState.WORKER_STATE_READY);
        }
    }

    private record Result(List<Integer> tokens, GenerateChunk last) {
    }

    private static Result generate(WorkerServiceGrpc.WorkerServiceBlockingStub stub, String id, int[] prompt, int max) {
        GenerateRequest.Builder req = GenerateRequest.newBuilder().setRequestId(id)
                .setSampling(SamplingParams.newBuilder().setTemperature(0)) // greedy: unset samples at the default
                .setStop(StopConditions.newBuilder().setMaxTokens(max).setIgnoreEos(true));
        for (int t : prompt) {
            req.addTokenIds(t);
        }
        List<Integer> tokens = new ArrayList<>();
        GenerateChunk last = null;
        for (Iterator<GenerateChunk> it = stub.generate(req.build()); it.hasNext(); ) {
            last = it.next();
            tokens.addAll(last.getTokenIdsList());
        }
        return new Result(tokens, last);
    }

    static ConfigurableApplicationContext startWorker(KafkaBroker kafka, String workerId, int grpcPort, int mgmtPort) {
        return new SpringApplicationBuilder(WorkerApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(),
                "--server.port=" + mgmtPort,
                "--flotilla.worker.id=" + workerId,
                "--flotilla.worker.grpc-port=" + grpcPort,
                "--flotilla.worker.advertised-host=127.0.0.1",
                "--flotilla.worker.load-report-ms=100",
                "--flotilla.worker.sim.total-blocks=512",
                "--flotilla.worker.sim.kv-bytes-per-block=256",
                "--flotilla.worker.sim.speedup=50");
    }

    static Map<TopicPartition, Long> endOffsets(KafkaBroker kafka) {
        try (var consumer = consumer(kafka, new StringDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            for (var t : List.of(Topics.KV_EVENTS, Topics.WORKERS, Topics.WORKER_LOAD)) {
                for (int p = 0; p < t.partitions(); p++) {
                    parts.add(new TopicPartition(t.name(), p));
                }
            }
            return consumer.endOffsets(parts);
        }
    }

    /** Reads one worker's records of a topic from the given offsets until {@code done} holds (or 20 s pass). */
    static <T> List<T> read(KafkaBroker kafka, String topic, Map<TopicPartition, Long> from, Deserializer<T> values,
                            String key, Predicate<List<T>> done) {
        List<T> out = new ArrayList<>();
        try (var consumer = consumer(kafka, values)) {
            List<TopicPartition> parts = from.keySet().stream().filter(tp -> tp.topic().equals(topic)).toList();
            consumer.assign(parts);
            parts.forEach(tp -> consumer.seek(tp, from.get(tp)));
            long deadline = System.currentTimeMillis() + 20_000;
            while (!done.test(out) && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, T> r : consumer.poll(Duration.ofMillis(100))) {
                    if (key.equals(r.key()) && r.value() != null) {
                        out.add(r.value());
                    }
                }
            }
        }
        return out;
    }

    private static <T> KafkaConsumer<String, T> consumer(KafkaBroker kafka, Deserializer<T> values) {
        return new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(), values);
    }

    static Set<Long> replay(List<KvEventBatch> batches) {
        Set<Long> resident = new HashSet<>();
        for (KvEventBatch b : batches) {
            for (KvEvent e : b.getEventsList()) {
                switch (e.getEventCase()) {
                    case STORED -> e.getStored().getBlocksList().stream().map(StoredBlock::getSeqHash).forEach(resident::add);
                    case REMOVED -> e.getRemoved().getSeqHashesList().forEach(resident::remove);
                    case CLEARED -> resident.clear();
                    default -> throw new AssertionError("empty event in batch " + b.getSeq());
                }
            }
        }
        return resident;
    }

    private static double metricValue(String exposition, String name, String workerId) {
        return exposition.lines()
                .filter(l -> l.startsWith(name + "{") && l.contains("worker=\"" + workerId + "\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .findFirst().orElseThrow(() -> new AssertionError(name + " for " + workerId + " not exported"));
    }
}
