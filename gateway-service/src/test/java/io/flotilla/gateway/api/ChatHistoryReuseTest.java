package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.generation.ModelProfiles;
import io.flotilla.gateway.tokenize.ChatPromptCache;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.RouteRequest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A chat that resends its history through the whole request path: the second turn's history comes from the
 * prompt cache, and the worker and the router get exactly the ids and block hashes of the full path.
 */
class ChatHistoryReuseTest extends GatewayTestBase {

    @Autowired
    ModelProfiles profiles;

    @Test
    void theSecondTurnReusesTheFirstAndSendsTheSameIdsAndHashes() {
        ChatPromptCache cache = profiles.promptCache();
        long hits = cache.hits();
        long reused = cache.reusedTokens();
        String system = "You are a careful agent.\nRead the files before you change them.\n".repeat(30);
        post("""
                {"messages":[{"role":"system","content":"%s"},{"role":"user","content":"List the files."}],"max_tokens":2}"""
                .formatted(system.replace("\n", "\\n")));
        post("""
                {"messages":[{"role":"system","content":"%s"},{"role":"user","content":"List the files."},
                 {"role":"assistant","content":"a.txt\\nb.txt"},{"role":"user","content":"Open a.txt."}],"max_tokens":2}"""
                .formatted(system.replace("\n", "\\n")));

        int[] expected = FakeCluster.TOKENIZER.encode("<|im_start|>system\n" + system + "<|im_end|>\n"
                + "<|im_start|>user\nList the files.<|im_end|>\n<|im_start|>assistant\na.txt\nb.txt<|im_end|>\n"
                + "<|im_start|>user\nOpen a.txt.<|im_end|>\n<|im_start|>assistant\n");
        List<GenerateRequest> second = Stream.concat(cluster.workerA.generates.stream(), cluster.workerB.generates.stream())
                .filter(g -> g.getTokenIdsCount() == expected.length).toList();
        assertThat(second).singleElement().satisfies(g -> assertThat(g.getTokenIdsList())
                .containsExactly(Arrays.stream(expected).boxed().toArray(Integer[]::new)));
        RouteRequest route = cluster.router.routesOf(second.get(0).getRequestId()).get(0);
        long[] hashes = new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16)
                .seqHashes(expected);
        assertThat(route.getSeqHashesList()).containsExactly(Arrays.stream(hashes).boxed().toArray(Long[]::new));
        assertThat(cache.hits()).isEqualTo(hits + 1);
        assertThat(cache.reusedTokens() - reused).as("the first turn's prompt, but its generation prompt")
                .isGreaterThan(expected.length / 2);
    }

    private void post(String body) {
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk();
    }
}
