package io.flotilla.gateway.generation;

import io.flotilla.gateway.client.RequestRecordPublisher;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.metrics.TenantMetrics;
import io.flotilla.gateway.metrics.TenantTags;
import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.hash.ScopedHasher;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.RoutingMode;
import io.flotilla.protocol.v1.SamplingParams;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.publisher.SignalType;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class OverlapPredictionTest {

    private static final RoutingMode KV = RoutingMode.ROUTING_MODE_KV;

    @ParameterizedTest(name = "overlap {0} of {1} tokens, {2} cached, block {3} → {4}")
    @CsvSource({
            // overlap, context, cached, block, result
            "0,   100, 0,   16, EXACT",
            "0,   100, 15,  16, EXACT",  // a partial block is no block
            "6,   100, 96,  16, EXACT",
            "6,   100, 80,  16, OVER",   // predicted 6, reused 5
            "5,   100, 96,  16, UNDER",  // predicted 5, reused 6
            "7,   112, 111, 16, EXACT",  // the whole prompt is indexed, yet one token is evaluated: 6 blocks
            "7,   112, 96,  16, EXACT",
            "7,   113, 112, 16, EXACT",  // a token past the last block: all 7 can be reused
            "7,   113, 96,  16, OVER",
            "1,   1,   0,   16, EXACT",  // a one-token prompt reuses nothing
            "40,  100, 96,  16, EXACT",  // an overlap past the prompt is capped by it
    })
    void predictedBlocksAgainstTheWorkersCount(int overlap, int context, int cached, int block, OverlapPrediction.Result expected) {
        assertThat(new OverlapPrediction(overlap, context).judge(cached, block)).isEqualTo(expected);
    }

    @Test
    void theLastRoutingWinsAfterAMigration() {
        RequestResult r = RequestResult.arrived(Instant.EPOCH)
                .apply(new RequestEvent.Routed("a", KV, 0, new OverlapPrediction(6, 100)))
                .apply(new RequestEvent.Migrated("a"))
                .apply(new RequestEvent.Routed("b", KV, 0, new OverlapPrediction(0, 103)))
                .apply(new RequestEvent.Tokens(new int[]{7}, Instant.EPOCH, false, 0));

        assertThat(r.overlapResult(16)).contains(OverlapPrediction.Result.EXACT);
    }

    @Test
    void onlyKvAwareRoutesWithoutAHandoffPredict() {
        RequestResult loadRouted = RequestResult.arrived(Instant.EPOCH)
                .apply(new RequestEvent.Routed("a", RoutingMode.ROUTING_MODE_LOAD, 0, new OverlapPrediction(6, 100)))
                .apply(new RequestEvent.Tokens(new int[]{7}, Instant.EPOCH, false, 0));
        RequestResult approx = RequestResult.arrived(Instant.EPOCH)
                .apply(new RequestEvent.Routed("a", RoutingMode.ROUTING_MODE_KV_APPROX, 0, new OverlapPrediction(6, 100)))
                .apply(new RequestEvent.Tokens(new int[]{7}, Instant.EPOCH, false, 0));
        RequestResult handoff = RequestResult.arrived(Instant.EPOCH)
                .apply(new RequestEvent.Routed("a", KV, 0, new OverlapPrediction(6, 100)))
                .apply(new RequestEvent.Prefilled("p", 96))
                .apply(new RequestEvent.Tokens(new int[]{7}, Instant.EPOCH, true, 96));

        assertThat(loadRouted.overlapResult(16)).isEmpty();
        assertThat(approx.overlapResult(16)).contains(OverlapPrediction.Result.OVER);
        assertThat(handoff.overlapResult(16)).isEmpty();
        assertThat(RequestResult.arrived(Instant.EPOCH).overlapResult(16)).isEmpty();
    }

    @Test
    void accountingCountsFinishedKvRoutedRequestsOnly() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RequestAccounting accounting = new RequestAccounting(new GatewayMetrics(registry),
                new TenantMetrics(registry, new TenantTags(Set.of(), 10)),
                new RequestRecordPublisher((record, onError) -> { }, 10), Clock.systemUTC());

        accounting.end(request("ok", 96, "stop"), SignalType.ON_COMPLETE);      // exact
        accounting.end(request("over", 80, "stop"), SignalType.ON_COMPLETE);    // over
        accounting.end(request("abandoned", 96, null), SignalType.CANCEL);     // not finished: not counted

        assertThat(count(registry, "exact")).isEqualTo(1);
        assertThat(count(registry, "over")).isEqualTo(1);
        assertThat(count(registry, "under")).isZero();
    }

    private static double count(SimpleMeterRegistry registry, String result) {
        Counter c = registry.find("flotilla.gateway.overlap.predictions").tags("model", "m", "result", result).counter();
        return c == null ? 0 : c.count();
    }

    private static RequestContext request(String id, int cached, String finish) {
        RequestContext ctx = new RequestContext(id, Instant.now());
        ctx.on(new RequestEvent.Resolved(new GenerationJob(id, "m", "t", new int[100], 4, SamplingParams.getDefaultInstance(), 1, List.of(),
                new int[0], false, false,
                ScopedHasher.shared(new BlockHasher(KvNamespace.of("m", "tok", "bf16/bs16/paged"), 16)),
                (Tokenizer) null, null)));
        ctx.on(new RequestEvent.Routed("w", KV, 0, new OverlapPrediction(6, 100)));
        ctx.on(new RequestEvent.Tokens(new int[]{1}, Instant.now(), false, cached));
        ctx.on(new RequestEvent.Finished(FinishReason.FINISH_REASON_STOP));
        if (finish != null) {
            ctx.on(new RequestEvent.Responded(finish));
        }
        return ctx;
    }
}
