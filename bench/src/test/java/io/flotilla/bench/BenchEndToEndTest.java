package io.flotilla.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flotilla.bench.report.RequestsCsv;
import io.flotilla.bench.workload.TraceReaderTestAccess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs the CLI against {@link FakeGateway} over real HTTP and checks what it writes. */
class BenchEndToEndTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static int run(String... args) {
        picocli.CommandLine cl = BenchCli.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        assertThat(code).as("exit code; stderr: %s", err).isZero();
        return code;
    }

    @Test
    void replaysTheMooncakeSampleAndWritesAllThreeReports(@TempDir Path out) throws Exception {
        try (FakeGateway gw = new FakeGateway(2, 0, 0)) {
            run("--trace", TraceReaderTestAccess.sample().toString(), "--speedup", "1000", "--url", gw.url(),
                    "--router-url", gw.url(), "--out", out.toString(), "--quiet", "--slo-ttft-ms", "60000",
                    "--slo-itl-ms", "60000");

            assertThat(gw.bodies).hasSize(20);
            JsonNode first = gw.bodies.stream().filter(b -> b.get("prompt").size() == 40160).findFirst().orElseThrow();
            assertThat(first.get("model").asText()).isEqualTo("fake-model");
            assertThat(first.get("max_tokens").asInt()).isEqualTo(6);
            assertThat(first.get("stream").asBoolean()).isTrue();
            assertThat(first.get("stream_options").get("include_usage").asBoolean()).isTrue();
            assertThat(first.get("ignore_eos").asBoolean()).isTrue();
            assertThat(first.get("temperature").asDouble()).isZero();
            assertThat(first.get("prompt").get(0).asInt()).isEqualTo(57678);
            assertThat(first.has("return_token_ids")).isFalse();
            assertThat(gw.disaggHeaders).containsOnly("null");
        }

        List<String> csv = Files.readAllLines(out.resolve("requests.csv"));
        assertThat(csv.get(0)).isEqualTo(String.join(",", RequestsCsv.COLUMNS));
        assertThat(csv).hasSize(21);
        assertThat(csv.subList(1, 21)).allSatisfy(l -> assertThat(l).contains(",ok,200,").containsPattern(",worker-[01],"));

        JsonNode s = JSON.readTree(out.resolve("summary.json").toFile());
        assertThat(s.get("requests").asInt()).isEqualTo(20);
        assertThat(s.get("completed").asInt()).isEqualTo(20);
        assertThat(s.get("failed").asInt()).isZero();
        for (String k : List.of("ttft_ms", "itl_ms", "e2e_ms")) {
            for (String p : List.of("p50", "p90", "p99", "mean")) {
                assertThat(s.get(k).get(p).isNumber()).as(k + "." + p).isTrue();
            }
        }
        assertThat(s.get("output_tokens_per_s").asDouble()).isPositive();
        assertThat(s.get("requests_per_s").asDouble()).isPositive();
        assertThat(s.get("prompt_tokens").asLong()).isEqualTo(391_904L);
        assertThat(s.get("prompt_tokens_sent").asLong()).isEqualTo(391_904L);
        assertThat(s.get("cached_tokens").asLong()).isZero();
        assertThat(s.get("cache_hit_rate").asDouble()).isZero();
        assertThat(s.get("oracle_hit_rate").asDouble()).isZero();
        assertThat(s.get("slo_attainment").asDouble()).isEqualTo(1.0);
        assertThat(s.get("goodput_rps").asDouble()).isPositive();
        assertThat(s.get("router_mode").asText()).isEqualTo("kv");
        assertThat(s.get("workers").get("distinct").asInt()).isEqualTo(2);
        assertThat(s.get("workers").get("requests").get("worker-0").asInt()
                + s.get("workers").get("requests").get("worker-1").asInt()).isEqualTo(20);
        assertThat(s.get("output_tokens").asLong()).isEqualTo(6 + 4 + 3 + 92 + 210 + 445 + 7 + 169 + 16 + 292 + 216 + 78 + 12
                + 675 + 8 + 35 + 443 + 251 + 389 + 16);

        String html = Files.readString(out.resolve("report.html"));
        assertThat(html).startsWith("<!DOCTYPE html>").contains("<svg", "TTFT CDF", "Requests per worker",
                "Output tokens per second", "Latency over time", "cached tokens");
        assertThat(html).doesNotContain("<script", "http://cdn", "https://");
    }

    @Test
    void sharedPrefixRunCountsCacheHitsFailuresAndTheConcurrencyCap(@TempDir Path out) throws Exception {
        try (FakeGateway gw = new FakeGateway(1, 7, 5)) {
            run("--groups", "2", "--prompts-per-group", "10", "--prefix-len", "64", "--suffix-len", "8", "--output-len", "5",
                    "--rate", "1000", "--arrival", "constant", "--concurrency", "3", "--url", gw.url(), "--model", "m1",
                    "--router-url", "http://127.0.0.1:1", "--out", out.toString(), "--quiet", "--disagg-hint", "auto");
            assertThat(gw.maxInFlight.get()).isLessThanOrEqualTo(3);
            assertThat(gw.bodies).allSatisfy(b -> assertThat(b.get("model").asText()).isEqualTo("m1"));
            assertThat(gw.disaggHeaders).containsOnly("auto");
        }
        JsonNode s = JSON.readTree(out.resolve("summary.json").toFile());
        assertThat(s.get("requests").asInt()).isEqualTo(20);
        // Requests 7 and 14 (in arrival order at the server) get 503; 5, 10, 15 and 20 an error event.
        assertThat(s.get("failed").asInt()).isEqualTo(2 + 4);
        assertThat(s.get("outcomes").get("http_503").asInt()).isEqualTo(2);
        assertThat(s.get("outcomes").get("error").asInt()).isEqualTo(4);
        assertThat(s.get("router_mode").asText()).isEqualTo("unknown");
        // 20 prompts of 72 tokens; 18 follow a prompt of their group: 4 cached blocks (64 tokens) each.
        assertThat(s.get("oracle_cached_tokens").asLong()).isEqualTo(18 * 64);
        assertThat(s.get("oracle_hit_rate").asDouble()).isEqualTo(18 * 64 / 1440.0, org.assertj.core.data.Offset.offset(1e-6));
        // One worker sees every prompt, including failed ones, so it caches what the oracle does (ok requests only reported).
        assertThat(s.get("cache_hit_rate").asDouble()).isGreaterThan(0.5);
        assertThat(Files.readString(out.resolve("requests.csv"))).contains(",http_503,503,", ",error,200,");
        assertThat(s.get("error_codes").get("queue_timeout").asInt()).isEqualTo(2);
    }

    @Test
    void tenantsPrioritiesAndTheQueueTimeoutAreSentAndBrokenDown(@TempDir Path out) throws Exception {
        try (FakeGateway gw = new FakeGateway(2, 0, 0)) {
            run("--groups", "4", "--prompts-per-group", "50", "--prefix-len", "32", "--suffix-len", "8", "--output-len", "3",
                    "--rate", "2000", "--arrival", "constant", "--url", gw.url(), "--model", "m1",
                    "--router-url", "http://127.0.0.1:1", "--out", out.toString(), "--quiet", "--seed", "5",
                    "--tenants", "heavy:10:sk-heavy,light:1", "--priority", "interactive:1,batch:1", "--queue-timeout", "300s");
            assertThat(gw.flowHeaders).allSatisfy(h -> assertThat(h).startsWith("300000ms|"));
            assertThat(gw.flowHeaders).allSatisfy(h -> assertThat(h).matches("300000ms\\|(interactive|batch)\\|.*"));
            long heavy = gw.bodies.stream().filter(b -> b.get("user").asText().equals("heavy")).count();
            long light = gw.bodies.stream().filter(b -> b.get("user").asText().equals("light")).count();
            assertThat(heavy + light).isEqualTo(200);
            assertThat((double) heavy / light).as("shares 10:1").isBetween(6.0, 16.0);
            assertThat(gw.flowHeaders.stream().filter(h -> h.endsWith("|Bearer sk-heavy")).count()).isEqualTo(heavy);
        }
        JsonNode s = JSON.readTree(out.resolve("summary.json").toFile());
        assertThat(s.get("tenants").get("heavy").get("requests").asInt() + s.get("tenants").get("light").get("requests").asInt())
                .isEqualTo(200);
        assertThat(s.get("tenants").get("light").get("ttft_ms").get("p99").isNumber()).isTrue();
        assertThat(s.get("bands").get("interactive").get("completed").asInt()
                + s.get("bands").get("batch").get("completed").asInt()).isEqualTo(200);
        assertThat(s.get("queue_ms").get("p99").asDouble()).isBetween(0.0, 6.0);
        assertThat(s.get("modes").get("gateway_fallback").asInt()).isEqualTo(40);
        assertThat(s.get("config").get("queue_timeout_ms").asLong()).isEqualTo(300_000);
        assertThat(Files.readString(out.resolve("report.html"))).contains("Per tenant", "Per priority band");
    }

    @Test
    void multiTurnSessionsSendGrowingPromptsWithReturnedTokenIds(@TempDir Path out) throws Exception {
        try (FakeGateway gw = new FakeGateway(2, 0, 0)) {
            run("--sessions", "3", "--turns", "3", "--prefix-len", "40", "--suffix-len", "8", "--output-len", "4",
                    "--think-time-ms", "1", "--rate", "1000", "--url", gw.url(), "--router-url", gw.url(),
                    "--out", out.toString(), "--quiet");
            // First a one-token probe whether the server takes return_token_ids (this one does), then the turns.
            assertThat(gw.bodies).hasSize(10);
            assertThat(gw.bodies.get(0).get("max_tokens").asInt()).isEqualTo(1);
            assertThat(gw.bodies.get(0).has("stream")).isFalse();
            List<JsonNode> turns = gw.bodies.subList(1, gw.bodies.size());
            assertThat(turns).allSatisfy(b -> assertThat(b.get("return_token_ids").asBoolean()).isTrue());
            assertThat(turns.stream().map(b -> b.get("prompt").size()).sorted().toList())
                    .containsExactly(48, 48, 48, 60, 60, 60, 72, 72, 72);
            JsonNode second = turns.stream().filter(b -> b.get("prompt").size() == 60).findFirst().orElseThrow();
            assertThat(second.get("prompt").get(48).asInt()).as("previous output ids follow the previous prompt").isEqualTo(1000);
            assertThat(second.get("prompt").get(51).asInt()).isEqualTo(1003);
        }
        List<String> csv = Files.readAllLines(out.resolve("requests.csv"));
        assertThat(csv).hasSize(10);
        JsonNode s = JSON.readTree(out.resolve("summary.json").toFile());
        assertThat(s.get("completed").asInt()).isEqualTo(9);
        // Turn k+1 re-sends turn k's 48 or 60 prompt tokens + 4 outputs: 3 blocks (48) then 3 blocks (of 63 eligible 3) of 16.
        assertThat(s.get("oracle_cached_tokens").asLong()).isEqualTo(3 * (48 + 48));
    }
}
