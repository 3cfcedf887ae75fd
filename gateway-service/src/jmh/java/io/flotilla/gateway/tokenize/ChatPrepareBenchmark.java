package io.flotilla.gateway.tokenize;

import io.flotilla.gateway.generation.PromptHashChain;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.RequestParser;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.hash.ScopedHasher;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Gateway CPU to prepare one chat request at agentic lengths (cl100k_base, ChatML, 16-token blocks), phase by
 * phase: {@code parse} (JSON body to a validated request), {@code template} (render), {@code tokenize}
 * (encode the rendered prompt), {@code hashChain} (sequence hashes of every full block), {@code fullPath}
 * (template + tokenize + hash, as the gateway does with the prefix cache off) and {@code seenHistory} (the
 * same through {@link ChatPromptCache} when the first N−1 messages were prepared before, each turn
 * being a new last message). Route is not part of it: it is a gRPC call measured with the router.
 * The chat is 40 messages, a system prompt then user and assistant in turn, of seeded English-like words.
 *
 * <pre>
 * java -cp &lt;classpath&gt; org.openjdk.jmh.Main ChatPrepareBenchmark -f 1 -wi 3 -i 5 -w 2s -r 2s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ChatPrepareBenchmark {

    static final int MESSAGES = 40;
    static final int BLOCK = 16;
    private static final String[] WORDS = ("the model router worker cache block token prefix request stream gateway "
            + "latency tool call result function returns error file line code test build deploy cluster node queue "
            + "a of to in is for on with as by it that this be are from at or an was not but have").split(" ");

    @Param({"8192", "32768", "131072"})
    public int tokens;

    private final Cl100kTokenizer tokenizer = new Cl100kTokenizer();
    private final ChatMlTemplate template = new ChatMlTemplate();
    private final ModelTokenization tokenization = new ModelTokenization(tokenizer, template);
    private final RequestParser parser = new RequestParser();
    private final ObjectMapper json = JsonMapper.builder().build();
    private final BlockHasher hasher = new BlockHasher(KvNamespace.of("bench", Cl100kTokenizer.ID, "bf16/bs16/paged"),
            BLOCK);

    private final PromptHashChain chain = new PromptHashChain(ScopedHasher.shared(hasher));
    private byte[] body;
    private List<ChatMessage> messages;
    private String rendered;
    private int[] ids;
    private ChatPromptCache cache;
    private List<ChatMessage> history;
    private int turn;

    @Setup(Level.Trial)
    public void setup() {
        SplittableRandom random = new SplittableRandom(32);
        int perMessage = tokens / MESSAGES;
        messages = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            String role = i == 0 ? "system" : i % 2 == 1 ? "user" : "assistant";
            messages.add(new ChatMessage(role, null, words(random, perMessage)));
        }
        List<Map<String, Object>> wire = new ArrayList<>();
        for (ChatMessage m : messages) {
            Map<String, Object> w = new LinkedHashMap<>();
            w.put("role", m.role());
            w.put("content", m.content());
            wire.add(w);
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("model", "bench");
        request.put("messages", wire);
        body = json.writeValueAsString(request).getBytes(StandardCharsets.UTF_8);
        rendered = template.render(messages);
        ids = tokenizer.encode(rendered);
        System.out.printf("%n[chat] %d messages, %d chars rendered, %d tokens, %d body bytes%n", MESSAGES,
                rendered.length(), ids.length, body.length);
        history = new ArrayList<>(messages.subList(0, MESSAGES - 1));
    }

    /** A fresh cache whose only entry is the history: each invocation is a turn whose N−1 messages were seen. */
    @Setup(Level.Iteration)
    public void seeHistory() {
        cache = new ChatPromptCache(true, 512L << 20);
        cache.chatPrompt("bench", tokenization, history, List.of());
    }

    private static String words(SplittableRandom random, int count) {
        StringBuilder s = new StringBuilder(count * 6);
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                s.append(random.nextInt(12) == 0 ? ".\n" : " ");
            }
            s.append(WORDS[random.nextInt(WORDS.length)]);
        }
        return s.toString();
    }

    @Benchmark
    public CompletionRequest parse() {
        JsonNode node = json.readTree(body);
        return parser.parse(CompletionKind.CHAT, node);
    }

    @Benchmark
    public String template() {
        return template.render(messages);
    }

    @Benchmark
    public int[] tokenize() {
        return tokenizer.encode(rendered);
    }

    @Benchmark
    public long[] hashChain() {
        return hasher.seqHashes(ids);
    }

    @Benchmark
    public long[] fullPath() {
        return hasher.seqHashes(tokenization.chatPrompt(messages));
    }

    /** A turn of a seen history: the N−1 messages hit, the last one (about tokens/40 tokens) is new. */
    @Benchmark
    public long[] seenHistory() {
        List<ChatMessage> turnMessages = new ArrayList<>(history);
        turnMessages.add(new ChatMessage("user", null, messages.get(MESSAGES - 1).content() + " turn " + turn++));
        ChatPromptCache.Prompt p = cache.chatPrompt("bench", tokenization, turnMessages, List.of());
        return p.seqHashes(chain);
    }
}
