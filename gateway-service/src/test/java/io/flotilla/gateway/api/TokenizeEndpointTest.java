package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.tokenize.ChatMessage;
import io.flotilla.gateway.tokenize.ChatMlTemplate;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /tokenize} and {@code /detokenize} in vLLM's shapes: the ids are those the gateway sends an engine
 * (cl100k_base and ChatML for the test models), and what it cannot honour is a 400 naming the parameter.
 */
class TokenizeEndpointTest extends GatewayTestBase {

    private static final Cl100kTokenizer CL100K = new Cl100kTokenizer();

    private int[] tokens(String body) {
        byte[] out = web.post().uri("/tokenize").header("Content-Type", "application/json").bodyValue(body).exchange()
                .expectStatus().isOk().expectBody().returnResult().getResponseBody();
        var node = tools.jackson.databind.json.JsonMapper.builder().build().readTree(out);
        assertThat(node.get("count").intValue()).isEqualTo(node.get("tokens").size());
        assertThat(node.get("max_model_len").intValue()).isPositive();
        int[] ids = new int[node.get("tokens").size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = node.get("tokens").get(i).intValue();
        }
        return ids;
    }

    @Test
    void aPromptIsTokenizedAsACompletionPromptIs() {
        assertThat(tokens("{\"model\": \"flotilla-sim\", \"prompt\": \"Hello, world! héllo\"}"))
                .containsExactly(CL100K.encode("Hello, world! héllo"));
    }

    @Test
    void messagesAreRenderedWithTheModelsChatTemplateBeforeTokenizing() {
        String rendered = new ChatMlTemplate().render(List.of(new ChatMessage("system", null, "Be brief."),
                new ChatMessage("user", null, "What is 2+2?")));
        assertThat(tokens("{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"},"
                + " {\"role\": \"user\", \"content\": \"What is 2+2?\"}]}")).containsExactly(CL100K.encode(rendered));
    }

    @Test
    void tokenStringsComeBesideTheIdsWhenAskedFor() {
        web.post().uri("/tokenize").header("Content-Type", "application/json")
                .bodyValue("{\"prompt\": \"Hello world\", \"return_token_strs\": true}").exchange()
                .expectStatus().isOk().expectBody()
                .jsonPath("$.token_strs[0]").isEqualTo("Hello")
                .jsonPath("$.token_strs[1]").isEqualTo(" world");
    }

    @Test
    void detokenizeJoinsACharacterSplitAcrossTokens() {
        int[] ids = CL100K.encode("naïve 漢字 😀 text");
        web.post().uri("/detokenize").header("Content-Type", "application/json")
                .bodyValue("{\"model\": \"flotilla-sim\", \"tokens\": " + Arrays.toString(ids) + "}").exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.prompt").isEqualTo("naïve 漢字 😀 text");
    }

    @Test
    void whatCannotBeHonouredIsA400NamingIt() {
        expect400("{\"prompt\": \"x\", \"messages\": []}", "prompt");
        expect400("{\"model\": \"flotilla-sim\"}", "messages");
        expect400("{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"add_generation_prompt\": false}",
                "add_generation_prompt");
        expect400("{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"continue_final_message\": true}",
                "continue_final_message");
        expect400("{\"prompt\": \"x\", \"chat_template\": \"{{ x }}\"}", "chat_template");
        web.post().uri("/detokenize").header("Content-Type", "application/json")
                .bodyValue("{\"tokens\": [1, 999999999]}").exchange()
                .expectStatus().isBadRequest().expectBody().jsonPath("$.error.param").isEqualTo("tokens");
        web.post().uri("/tokenize").header("Content-Type", "application/json")
                .bodyValue("{\"model\": \"ghost-model\", \"prompt\": \"x\"}").exchange()
                .expectStatus().isNotFound().expectBody().jsonPath("$.error.code").isEqualTo("model_not_found");
    }

    private void expect400(String body, String param) {
        web.post().uri("/tokenize").header("Content-Type", "application/json").bodyValue(body).exchange()
                .expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo(param)
                .jsonPath("$.error.type").isEqualTo("invalid_request_error");
    }
}
