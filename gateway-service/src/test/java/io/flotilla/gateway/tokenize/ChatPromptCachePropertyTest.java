package io.flotilla.gateway.tokenize;

import io.flotilla.gateway.generation.PromptHashChain;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.hash.ScopedHasher;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Named invariant: <em>a prompt from {@link ChatPromptCache} has exactly the ids (and block hashes) of tokenizing
 * its whole rendering</em>, for agentic sessions (each request the previous one's messages, the model's reply and
 * a new user message or tool results; sometimes an earlier message edited, tools changed, a tiny cache that
 * evicts) under every chat template the project ships or tests against — ChatML and the Jinja templates of
 * Llama 3.2, Mistral 7B v0.1, Mistral Nemo, Qwen2.5 and the Python-compatibility fixture — and two templates
 * whose rendering of earlier messages depends on later ones, which must fall back (detected). cl100k_base
 * tokenizes; messages mix white space, line feeds, digits, non-Latin text, emoji, no-break spaces and chat markers,
 * so the boundary between history and new text falls everywhere the templates put it.
 */
class ChatPromptCachePropertyTest {

    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-03T10:00:00Z"), ZoneOffset.UTC);
    static final Tokenizer CL100K = new Cl100kTokenizer();
    /** Renders the last message differently ({@code loop.last}): every history's text changes on the next turn. */
    static final String LAST_DIFFERS = "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}"
            + "{{ ' (latest)' if loop.last else '' }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}";
    /** States the message count first: nothing of an earlier rendering is a prefix of a later one. */
    static final String COUNTS_MESSAGES = "Conversation of {{ messages | length }} messages\n{% for m in messages %}"
            + "<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}<|assistant|>\n";
    static final Map<String, ChatTemplate> TEMPLATES = templates();
    static final String[] PIECES = {"hello", " world", "\n", "\n\n", " ", "  ", "\t", "'s", "'re", "123", "4567", "é",
        "日本語", "😀", "\u00A0", "\u2028", "<|im_end|>", "<|im_start|>", "<|eot_id|>", ".", "!!", "{\"a\": 1}", "\r\n",
        "</tool_call>", "[INST]", "x", "Ünïcödé", " \n", "\n "};
    static final List<Map<String, Object>> TOOLS = JinjaChatTemplateTest.TOOLS;

    @Property(tries = 300, seed = "32006")
    void idsAndHashesEqualTheFullPath(@ForAll("templateNames") String name, @ForAll long seed) {
        Session s = new Session(name, seed, CL100K);
        s.run((request, tools) -> {
            int[] expected;
            try {
                expected = s.tokenization.chatPrompt(request, tools);
            } catch (TemplateRejectedException e) {
                assertThatThrownBy(() -> s.cache.chatPrompt(name, s.tokenization, request, tools))
                        .isInstanceOf(TemplateRejectedException.class);
                return;
            }
            ChatPromptCache.Prompt p = s.cache.chatPrompt(name, s.tokenization, request, tools);
            assertThat(p.ids()).as("ids of %s", request).isEqualTo(expected);
            PromptHashChain chain = s.chain();
            assertThat(p.seqHashes(chain)).isEqualTo(chain.hasher().seqHashes(expected));
        });
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<String> templateNames() {
        return net.jqwik.api.Arbitraries.of(TEMPLATES.keySet());
    }

    @Example
    void aSessionUnderChatMlReusesItsHistory() {
        Session s = new Session(ChatMlTemplate.ID, 7, CL100K);
        List<Integer> cached = new ArrayList<>();
        s.plain = true;
        s.run((request, tools) -> cached.add(s.cache.chatPrompt("m", s.tokenization, request, tools).cachedTokens()));
        assertThat(cached.get(0)).isZero();
        assertThat(cached.subList(1, cached.size())).allSatisfy(n -> assertThat(n).isPositive());
        assertThat(s.cache.hits()).isEqualTo(cached.size() - 1);
        assertThat(s.cache.fallbacks()).isZero();
    }

    @Example
    void templatesThatRewriteTheHistoryFallBack() {
        ModelTokenization t = new ModelTokenization(CL100K, TEMPLATES.get("last-differs"));
        ChatPromptCache cache = new ChatPromptCache(true, 1 << 20);
        List<ChatMessage> first = List.of(new ChatMessage("user", null, "hi"));
        List<ChatMessage> second = List.of(first.get(0), new ChatMessage("assistant", null, "hello"),
                new ChatMessage("user", null, "more"));
        assertThat(cache.chatPrompt("m", t, first, List.of()).ids()).isEqualTo(t.chatPrompt(first));
        ChatPromptCache.Prompt p = cache.chatPrompt("m", t, second, List.of());
        assertThat(p.ids()).isEqualTo(t.chatPrompt(second));
        assertThat(p.cachedTokens()).as("'hi (latest)' is not how the next turn renders 'hi'").isZero();
        assertThat(cache.fallbacks()).isEqualTo(1);
        assertThat(cache.hits()).isZero();

        Session s = new Session("counts-messages", 7, CL100K);
        s.plain = true;
        s.run((request, tools) -> assertThat(s.cache.chatPrompt("m", s.tokenization, request, tools).ids())
                .isEqualTo(s.tokenization.chatPrompt(request, tools)));
        assertThat(s.cache.hits()).isZero();
        assertThat(s.cache.fallbacks()).isEqualTo(s.turns - 1);
    }

    /**
     * Self-test: a tokenizer that claims to split after every line feed, even before white space, makes the
     * invariant fail (Llama 3.2 ends its generation prompt with two line feeds, one cl100k token).
     */
    @Example
    void aWrongSplitRuleIsCaught() {
        Tokenizer lying = new Tokenizer() {
            @Override
            public String id() {
                return CL100K.id();
            }

            @Override
            public int[] encode(String text) {
                return CL100K.encode(text);
            }

            @Override
            public boolean splitsAt(CharSequence text, int at) {
                return at > 0 && at < text.length() && text.charAt(at - 1) == '\n';
            }

            @Override
            public int vocabSize() {
                return CL100K.vocabSize();
            }

            @Override
            public byte[] tokenBytes(int id) {
                return CL100K.tokenBytes(id);
            }
        };
        int wrong = 0;
        for (long seed = 0; seed < 200 && wrong == 0; seed++) {
            Session s = new Session("llama-3.2-3b-instruct", seed, lying);
            int[] count = {0};
            s.run((request, tools) -> {
                if (!java.util.Arrays.equals(s.cache.chatPrompt("m", s.tokenization, request, tools).ids(),
                        s.tokenization.chatPrompt(request, tools))) {
                    count[0]++;
                }
            });
            wrong += count[0];
        }
        assertThat(wrong).as("prompts that differ from the full path under a wrong split rule").isPositive();
    }

    @Example
    void aTokenizerWithoutSplitsTakesTheFullPath() {
        ChatPromptCache cache = new ChatPromptCache(true, 1 << 20);
        ModelTokenization t = new ModelTokenization(new Tokenizer() {
            @Override
            public String id() {
                return "plain";
            }

            @Override
            public int[] encode(String text) {
                return CL100K.encode(text);
            }

            @Override
            public int vocabSize() {
                return CL100K.vocabSize();
            }

            @Override
            public byte[] tokenBytes(int id) {
                return CL100K.tokenBytes(id);
            }
        }, new ChatMlTemplate());
        List<ChatMessage> chat = List.of(new ChatMessage("user", null, "hi\nthere"));
        assertThat(cache.chatPrompt("m", t, chat, List.of()).ids()).isEqualTo(t.chatPrompt(chat));
        assertThat(cache.chatPrompt("m", t, chat, List.of()).cachedTokens()).isZero();
        assertThat(cache.size()).isZero();
        assertThat(cache.misses() + cache.hits() + cache.fallbacks()).isZero();
    }

    interface Turn {
        void check(List<ChatMessage> request, List<Map<String, Object>> tools);
    }

    /** One seeded agentic session: who says what, turn by turn. */
    static final class Session {
        final ModelTokenization tokenization;
        final ChatPromptCache cache;
        final Random random;
        final int turns;
        boolean plain;

        Session(String template, long seed, Tokenizer tokenizer) {
            this.random = new Random(seed);
            this.tokenization = new ModelTokenization(tokenizer, TEMPLATES.get(template));
            this.cache = new ChatPromptCache(true, random.nextInt(4) == 0 ? 600 : 1 << 20);
            this.turns = 2 + random.nextInt(5);
        }

        PromptHashChain chain() {
            BlockHasher base = new BlockHasher(KvNamespace.of("m", CL100K.id(), "bf16/bs4/paged"), random.nextBoolean() ? 4 : 8);
            return new PromptHashChain(random.nextInt(3) == 0 ? ScopedHasher.of(base, new KvScope("", "tenant-a", 2))
                    : ScopedHasher.shared(base));
        }

        void run(Turn turn) {
            List<ChatMessage> history = new ArrayList<>();
            List<Map<String, Object>> tools = !plain && random.nextInt(3) == 0 ? TOOLS : List.of();
            if (random.nextBoolean()) {
                history.add(new ChatMessage("system", null, text()));
            }
            int call = 0;
            for (int t = 0; t < turns; t++) {
                ChatMessage last = history.isEmpty() ? null : history.get(history.size() - 1);
                if (last != null && !last.toolCalls().isEmpty()) {
                    for (ChatMessage.ToolCall c : last.toolCalls()) {
                        history.add(new ChatMessage("tool", null, text(), List.of(), c.id(), null));
                    }
                } else {
                    history.add(new ChatMessage("user", null, text()));
                }
                turn.check(List.copyOf(history), tools);
                if (!plain && random.nextInt(4) == 0) {
                    List<ChatMessage.ToolCall> calls = new ArrayList<>();
                    for (int i = 1 + random.nextInt(2); i > 0; i--) {
                        calls.add(new ChatMessage.ToolCall(String.format("call%05d", call++), "get_weather",
                                "{\"city\": \"" + text().replace("\"", "").replace("\\", "") + "\"}"));
                    }
                    history.add(new ChatMessage("assistant", null, random.nextBoolean() ? null : text(), calls, null, null));
                } else {
                    history.add(new ChatMessage("assistant", null, text()));
                }
                if (!plain && random.nextInt(8) == 0 && history.size() > 2) {
                    int i = random.nextInt(history.size());
                    ChatMessage m = history.get(i);
                    if (m.toolCalls().isEmpty()) { // the client edits an earlier message: a new branch
                        history.set(i, new ChatMessage(m.role(), m.name(), text(), List.of(), m.toolCallId(), null));
                    }
                }
                if (!plain && random.nextInt(8) == 0) {
                    tools = tools.isEmpty() ? TOOLS : List.of();
                }
            }
        }

        String text() {
            StringBuilder s = new StringBuilder();
            for (int i = random.nextInt(12); i >= 0; i--) {
                s.append(PIECES[random.nextInt(PIECES.length)]);
            }
            return s.toString();
        }
    }

    private static Map<String, ChatTemplate> templates() {
        Map<String, ChatTemplate> out = new LinkedHashMap<>();
        out.put(ChatMlTemplate.ID, new ChatMlTemplate());
        try {
            Path tmp = Files.createTempDirectory("chat-templates");
            for (String model : List.of("llama-3.2-3b-instruct", "mistral-7b-instruct-v0.1", "mistral-nemo-instruct-2407",
                    "qwen2.5-7b-instruct", "python-compat")) {
                ModelTokenization t = HfModelDirectory.load(model, TinyTokenizers.modelDir(tmp.resolve(model),
                        "/models/" + model), null, null, CLOCK);
                ((HfTokenizer) t.tokenizer()).close();
                out.put(model, t.template());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.put("last-differs", JinjaChatTemplate.compile("last-differs", LAST_DIFFERS, Map.of(), CLOCK));
        out.put("counts-messages", JinjaChatTemplate.compile("counts-messages", COUNTS_MESSAGES, Map.of(), CLOCK));
        return out;
    }
}
