package io.flotilla.gateway.tokenize;

import com.dynatrace.hash4j.hashing.HashStream128;
import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hashing;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.flotilla.gateway.jinja.PythonJson;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Chat prompts of conversations that resend their history: the token ids of a rendered conversation, kept by the
 * content of its message list, so that the next turn (the same messages and more) tokenizes only its new text.
 *
 * <p>Every request is rendered whole (rendering is cheap next to tokenizing). The ids come from the cache only
 * where that is exact, checked on every use and never assumed of a template:
 * <ul>
 *   <li>an entry holds the ids of {@code text[0, split)} of an earlier rendering, the XXH3-128 hash of that text
 *       and its length; it is found by the digest of the earlier message list (with model, tokenizer, template
 *       and tools), the longest leading run of this request's messages that has an entry;</li>
 *   <li>it is used only when this request's rendering starts with that same text (a template that renders
 *       earlier messages differently once later ones exist — the last message, {@code loop.last}, a
 *       count of messages, consecutive tool results grouped — fails here: a <em>fallback</em>, counted) and
 *       the tokenizer {@linkplain Tokenizer#splitsAt splits} this rendering at {@code split}; the ids are then
 *       the entry's followed by the new text's, equal to tokenizing the whole rendering;</li>
 *   <li>each request leaves an entry for its own message list, split at the last position of its rendering
 *       where the tokenizer splits (between messages, before the generation prompt).</li>
 * </ul>
 * A tokenizer that knows no split position (HuggingFace tokenizers, for now) always takes the full path.
 *
 * <p>Entries also keep the block-hash chain of their full blocks for one {@link BlockChain} identity, which
 * the next turn extends instead of rehashing the history. Memory is bounded by {@code maxBytes}, weighed as
 * 4 bytes per id and 8 per hash (Caffeine, size-weighted, near-LRU eviction). Thread-safe.
 */
public final class ChatPromptCache {

    private static final Hasher128 DIGEST = Hashing.xxh3_128();
    private static final int ENTRY_OVERHEAD = 96;

    /** Digest of a leading run of messages, with model, tokenizer, template and tools. */
    private record Key(long high, long low) {
    }

    /** Ids of {@code text[0, split)}; {@code chain} the seq hashes of its full blocks under {@code chainIdentity}. */
    private record Entry(Tokenizer tokenizer, int split, long textHigh, long textLow, int[] ids,
                         Object chainIdentity, long[] chain) {

        int weight() {
            return ENTRY_OVERHEAD + ids.length * 4 + (chain == null ? 0 : chain.length * 8);
        }
    }

    private final boolean enabled;
    private final Cache<Key, Entry> entries;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder fallbacks = new LongAdder();
    private final LongAdder reusedTokens = new LongAdder();

    /**
     * @param enabled  false: every prompt takes the full path and nothing is kept
     * @param maxBytes most bytes of ids and hashes kept
     */
    public ChatPromptCache(boolean enabled, long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("max bytes must not be negative, got " + maxBytes);
        }
        this.enabled = enabled && maxBytes > 0;
        this.entries = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((Key k, Entry e) -> e.weight())
                .executor(Runnable::run) // evict on the caller's thread: bounded at once, and deterministic in tests
                .build();
    }

    /**
     * The prompt of a conversation, with ids equal to {@code tokenization.chatPrompt(messages, tools)}.
     *
     * @param model the model name; entries of different models never meet
     * @throws TemplateRejectedException when the template refuses the conversation
     */
    public Prompt chatPrompt(String model, ModelTokenization tokenization, List<ChatMessage> messages,
                             List<Map<String, Object>> tools) {
        Tokenizer tokenizer = tokenization.tokenizer();
        String text = tokenization.template().render(messages, tools);
        // a tokenizer that does not split even between a line feed and a letter states no split rule at all
        if (!enabled || !tokenizer.splitsAt("\nx", 1)) {
            return new Prompt(tokenizer.encode(text), 0, null, null);
        }
        Key[] keys = keys(model, tokenization, messages, tools);
        Entry found = null;
        for (int k = keys.length - 1; k >= 0 && found == null; k--) {
            found = entries.getIfPresent(keys[k]);
        }
        int[] head = new int[0];
        int from = 0;
        Entry base = null;
        if (found == null) {
            misses.increment();
        } else if (found.tokenizer() == tokenizer && found.split() < text.length() && tokenizer.splitsAt(text, found.split())
                && sameText(text, found)) {
            hits.increment();
            reusedTokens.add(found.ids().length);
            base = found;
            head = found.ids();
            from = found.split();
        } else {
            fallbacks.increment();
        }
        int split = lastSplit(tokenizer, text, from);
        if (split < 0) {
            return new Prompt(concat(head, tokenizer.encode(text.substring(from))), head.length, base, null);
        }
        int[] kept = concat(head, tokenizer.encode(text.substring(from, split)));
        int[] ids = concat(kept, tokenizer.encode(text.substring(split)));
        HashValue128 textHash = DIGEST.hashCharsTo128Bits(text.substring(0, split));
        Key own = keys[keys.length - 1];
        Entry entry = new Entry(tokenizer, split, textHash.getMostSignificantBits(), textHash.getLeastSignificantBits(),
                kept, null, null);
        entries.put(own, entry);
        return new Prompt(ids, head.length, base, new Slot(own, entry));
    }

    /** Requests whose history had an entry that held (ids reused). */
    public long hits() {
        return hits.sum();
    }

    /** Requests whose message list had no entry for any leading run. */
    public long misses() {
        return misses.sum();
    }

    /** Requests whose history had an entry that this rendering did not start with: tokenized whole. */
    public long fallbacks() {
        return fallbacks.sum();
    }

    /** Prompt tokens taken from the cache instead of tokenized, over all hits. */
    public long reusedTokens() {
        return reusedTokens.sum();
    }

    /** Bytes of ids and hashes kept now. */
    public long bytes() {
        return entries.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    }

    /** Tokens kept now. */
    public long tokens() {
        long sum = 0;
        for (Entry e : entries.asMap().values()) {
            sum += e.ids().length;
        }
        return sum;
    }

    /** Entries kept now. */
    public long size() {
        return entries.estimatedSize();
    }

    /** Where a request's own entry sits, so that its hash chain can be added once computed. */
    private record Slot(Key key, Entry entry) {
    }

    /**
     * A chat prompt's ids and what they were built from.
     *
     * @param ids          the prompt's token ids
     * @param cachedTokens how many leading ids came from the cache (0 on the full path)
     */
    public final class Prompt {

        private final int[] ids;
        private final int cachedTokens;
        private final Entry base;
        private final Slot own;

        private Prompt(int[] ids, int cachedTokens, Entry base, Slot own) {
            this.ids = ids;
            this.cachedTokens = cachedTokens;
            this.base = base;
            this.own = own;
        }

        public int[] ids() {
            return ids;
        }

        public int cachedTokens() {
            return cachedTokens;
        }

        /**
         * Sequence hashes of every full block of {@link #ids}, extending the history's chain when it was kept
         * under the same identity; keeps this request's chain with its entry for the next turn.
         */
        public long[] seqHashes(BlockChain chain) {
            long[] known = base != null && chain.identity().equals(base.chainIdentity()) ? base.chain() : new long[0];
            long[] seq = chain.seqHashes(ids, known);
            if (own != null) {
                Entry e = own.entry();
                long[] mine = Arrays.copyOf(seq, Math.min(seq.length, e.ids().length / chain.blockSize()));
                entries.asMap().replace(own.key(), e, new Entry(e.tokenizer(), e.split(), e.textHigh(), e.textLow(),
                        e.ids(), chain.identity(), mine));
            }
            return seq;
        }
    }

    private static boolean sameText(String text, Entry entry) {
        HashValue128 h = DIGEST.hashCharsTo128Bits(text.substring(0, entry.split()));
        return h.getMostSignificantBits() == entry.textHigh() && h.getLeastSignificantBits() == entry.textLow();
    }

    /** The last position after {@code from} where the tokenizer splits {@code text}, or -1. */
    private static int lastSplit(Tokenizer tokenizer, String text, int from) {
        for (int at = text.length() - 1; at > from; at--) {
            if (tokenizer.splitsAt(text, at)) {
                return at;
            }
        }
        return -1;
    }

    /** keys[k]: the digest of messages[0..k] under this model, tokenizer, template and tools. */
    private static Key[] keys(String model, ModelTokenization t, List<ChatMessage> messages,
                              List<Map<String, Object>> tools) {
        HashStream128 s = DIGEST.hashStream();
        s.putString(model).putString(t.tokenizer().id()).putString(t.template().id()).putInt(tools.size());
        for (Map<String, Object> tool : tools) {
            s.putString(PythonJson.dumps(tool, null, null, false));
        }
        HashValue128 prev = s.get();
        Key[] keys = new Key[messages.size()];
        for (int i = 0; i < keys.length; i++) {
            ChatMessage m = messages.get(i);
            s.reset().putLong(prev.getMostSignificantBits()).putLong(prev.getLeastSignificantBits());
            s.putString(m.role());
            putNullable(s, m.name());
            if (m.content() == null) {
                s.putBoolean(false);
            } else { // hashed apart: a stream takes long text char by char, several times slower
                HashValue128 content = DIGEST.hashCharsTo128Bits(m.content());
                s.putBoolean(true).putInt(m.content().length())
                        .putLong(content.getMostSignificantBits()).putLong(content.getLeastSignificantBits());
            }
            s.putInt(m.toolCalls().size());
            for (ChatMessage.ToolCall c : m.toolCalls()) {
                putNullable(s, c.id());
                s.putString(c.name()).putString(c.arguments());
            }
            putNullable(s, m.toolCallId());
            putNullable(s, m.reasoningContent());
            prev = s.get();
            keys[i] = new Key(prev.getMostSignificantBits(), prev.getLeastSignificantBits());
        }
        return keys;
    }

    private static void putNullable(HashStream128 s, String value) {
        if (value == null) {
            s.putBoolean(false);
        } else {
            s.putBoolean(true).putString(value);
        }
    }

    private static int[] concat(int[] a, int[] b) {
        if (a.length == 0) {
            return b;
        }
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
