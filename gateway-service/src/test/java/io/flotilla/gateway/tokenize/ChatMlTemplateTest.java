package io.flotilla.gateway.tokenize;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ChatMlTemplateTest {

    @Test
    void rendersEveryMessageThenTheAssistantCue() {
        String prompt = new ChatMlTemplate().render(List.of(
                new ChatMessage("developer", null, "Be brief."),
                new ChatMessage("user", "alice", "Hi"),
                new ChatMessage("assistant", null, "Hello"),
                new ChatMessage("user", null, "Bye")));
        assertThat(prompt).isEqualTo("<|im_start|>system\nBe brief.<|im_end|>\n"
                + "<|im_start|>user name=alice\nHi<|im_end|>\n"
                + "<|im_start|>assistant\nHello<|im_end|>\n"
                + "<|im_start|>user\nBye<|im_end|>\n"
                + "<|im_start|>assistant\n");
    }

    @Test
    void singleTokenStopStringsBecomeStopTokenIds() {
        ModelTokenization t = new ModelTokenization(new Cl100kTokenizer(), new ChatMlTemplate());
        int fox = new Cl100kTokenizer().encode(" fox")[0];
        assertThat(t.singleTokenStops(List.of(" fox", "jumps over the lazy dog", " fox"))).containsExactly(fox);
    }
}
