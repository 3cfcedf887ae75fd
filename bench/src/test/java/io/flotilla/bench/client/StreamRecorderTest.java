package io.flotilla.bench.client;

import org.junit.jupiter.api.Test;

import java.net.http.HttpHeaders;
import java.net.http.HttpTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

class StreamRecorderTest {

    /** A clock the test moves: each line is stamped with the time set before it is fed. */
    private long now;
    private final List<long[]> sunk = new ArrayList<>();

    private StreamRecorder recorder(boolean keepIds) {
        StreamRecorder r = new StreamRecorder(0, () -> now, keepIds, (n, c) -> sunk.add(new long[] {n, c}));
        r.onResponse(200, HttpHeaders.of(Map.of("X-Flotilla-Worker", List.of("worker-1"),
                "x-flotilla-prefill-worker", List.of("worker-7")), (a, b) -> true));
        return r;
    }

    private void feed(StreamRecorder r, long atMs, String data) {
        now = atMs * 1_000_000L;
        r.onNext("data: " + data);
        r.onNext("");
    }

    @Test
    void measuresTtftGapsAndPerTokenItlWithMultiTokenChunks() {
        StreamRecorder r = recorder(true);
        feed(r, 100, "{\"choices\":[{\"text\":\"a\",\"token_ids\":[1]}]}");
        feed(r, 130, "{\"choices\":[{\"text\":\"bc\",\"token_ids\":[2,3]}]}");
        feed(r, 190, "{\"choices\":[{\"text\":\"def\",\"token_ids\":[4,5,6]}]}");
        feed(r, 191, "{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}");
        feed(r, 192, "{\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":6,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":32}}}");
        feed(r, 193, "[DONE]");
        r.onComplete();
        now = 200_000_000L;

        StreamMeasurement m = r.finish(null);

        assertThat(m.outcome()).isEqualTo("ok");
        assertThat(m.ttftMs()).isEqualTo(100.0);
        assertThat(m.gapsMs()).containsExactly(30f, 60f);
        assertThat(m.itlMaxMs()).isEqualTo(60.0);
        assertThat(m.itlMeanMs()).as("90 ms over 5 token gaps").isCloseTo(18.0, offset(1e-9));
        assertThat(m.e2eMs()).isEqualTo(200.0);
        assertThat(m.chunks()).isEqualTo(3);
        assertThat(m.streamedTokens()).isEqualTo(6);
        assertThat(m.usage()).isEqualTo(new StreamEvent.Usage(40, 32, 6));
        assertThat(m.worker()).isEqualTo("worker-1");
        assertThat(m.prefillWorker()).isEqualTo("worker-7");
        assertThat(m.outputTokenIds()).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(sunk).extracting(s -> s[1]).containsExactly(1L, 2L, 3L);
    }

    @Test
    void anErrorEventMidStreamFailsTheRequest() {
        StreamRecorder r = recorder(false);
        feed(r, 10, "{\"choices\":[{\"text\":\"a\"}]}");
        feed(r, 20, "{\"error\":{\"message\":\"worker worker-1 died\",\"type\":\"server_error\"}}");
        r.onComplete();

        StreamMeasurement m = r.finish(null);

        assertThat(m.outcome()).isEqualTo("error");
        assertThat(m.error()).isEqualTo("worker worker-1 died");
        assertThat(m.ttftMs()).isEqualTo(10.0);
        assertThat(m.itlMeanMs()).isNaN();
        assertThat(m.outputTokenIds()).isEmpty();
    }

    @Test
    void aStreamThatStopsWithoutDoneOrUsageIsIncomplete() {
        StreamRecorder r = recorder(false);
        feed(r, 10, "{\"choices\":[{\"text\":\"a\"}]}");
        r.onComplete();
        assertThat(r.finish(null).outcome()).isEqualTo("incomplete");
    }

    @Test
    void usageWithoutDoneIsEnough() {
        StreamRecorder r = recorder(false);
        feed(r, 10, "{\"choices\":[{\"text\":\"a\"}]}");
        feed(r, 12, "{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}");
        r.onComplete();
        StreamMeasurement m = r.finish(null);
        assertThat(m.outcome()).isEqualTo("ok");
        assertThat(m.completionTokens()).isEqualTo(1);
    }

    @Test
    void httpStatusTimeoutAndTransportFailures() {
        StreamRecorder http = new StreamRecorder(0, () -> now, false, (n, c) -> { });
        http.onResponse(503, HttpHeaders.of(Map.of(), (a, b) -> true));
        http.onHttpErrorBody("{\"error\":{\"message\":\"all workers busy\"}}");
        StreamMeasurement m = http.finish(null);
        assertThat(m.outcome()).isEqualTo("http_503");
        assertThat(m.httpStatus()).isEqualTo(503);
        assertThat(m.error()).contains("all workers busy");
        assertThat(m.ttftMs()).isNaN();

        StreamRecorder slow = recorder(false);
        assertThat(slow.finish(new CompletionException(new HttpTimeoutException("t"))).outcome()).isEqualTo("timeout");

        StreamRecorder refused = new StreamRecorder(0, () -> now, false, (n, c) -> { });
        assertThat(refused.finish(new java.net.ConnectException("Connection refused")).outcome()).isEqualTo("io_error");
    }

    @Test
    void linesAfterFinishAreIgnored() {
        StreamRecorder r = recorder(false);
        r.finish(new java.util.concurrent.CancellationException());
        feed(r, 10, "{\"choices\":[{\"text\":\"late\"}]}");
        assertThat(sunk).isEmpty();
    }
}
