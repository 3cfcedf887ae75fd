package io.flotilla.gguf;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Learns byte-level BPE merges from a text, deterministically: words are GPT-2's pre-tokens in
 * byte-level form; each round merges the most frequent adjacent pair, ties going to the pair whose
 * {@code "left right"} sorts first; a pair whose concatenation is already a token is never merged, so
 * every merge adds exactly one token. The same text and count give the same merges on any JVM.
 */
final class BpeTrainer {

    /** GPT-2's pre-tokenizer pattern (HF ByteLevel's, llama.cpp's {@code gpt-2}). */
    static final Pattern GPT2_SPLIT = Pattern.compile(
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
            Pattern.UNICODE_CHARACTER_CLASS);

    private BpeTrainer() {
    }

    /**
     * @return up to {@code count} merges as {@code {left, right}}, first learned first
     * @throws IllegalStateException when the text runs out of pairs before {@code count}
     */
    static List<String[]> learn(String text, int count) {
        Map<String, Integer> wordCounts = new TreeMap<>();
        Matcher m = GPT2_SPLIT.matcher(text);
        while (m.find()) {
            wordCounts.merge(ByteLevel.encode(m.group()), 1, Integer::sum);
        }
        List<List<String>> words = new ArrayList<>();
        List<Integer> freqs = new ArrayList<>();
        Set<String> vocab = new HashSet<>();
        for (int b = 0; b < 256; b++) {
            vocab.add(String.valueOf(ByteLevel.charOf(b)));
        }
        for (Map.Entry<String, Integer> w : wordCounts.entrySet()) {
            List<String> symbols = new ArrayList<>();
            w.getKey().codePoints().forEach(c -> symbols.add(Character.toString(c)));
            words.add(symbols);
            freqs.add(w.getValue());
        }
        List<String[]> merges = new ArrayList<>();
        while (merges.size() < count) {
            Map<String, Integer> pairs = new HashMap<>();
            for (int i = 0; i < words.size(); i++) {
                List<String> s = words.get(i);
                for (int j = 0; j + 1 < s.size(); j++) {
                    if (!vocab.contains(s.get(j) + s.get(j + 1))) {
                        pairs.merge(s.get(j) + " " + s.get(j + 1), freqs.get(i), Integer::sum);
                    }
                }
            }
            String best = null;
            int bestCount = 0;
            for (Map.Entry<String, Integer> p : pairs.entrySet()) {
                if (p.getValue() > bestCount || (p.getValue() == bestCount && p.getKey().compareTo(best) < 0)) {
                    best = p.getKey();
                    bestCount = p.getValue();
                }
            }
            if (best == null) {
                throw new IllegalStateException("the text gives only " + merges.size() + " merges, not " + count);
            }
            String[] pair = best.split(" ", 2);
            merges.add(pair);
            vocab.add(pair[0] + pair[1]);
            for (List<String> s : words) {
                for (int j = 0; j + 1 < s.size(); j++) {
                    if (s.get(j).equals(pair[0]) && s.get(j + 1).equals(pair[1])) {
                        s.set(j, pair[0] + pair[1]);
                        s.remove(j + 1);
                    }
                }
            }
        }
        return merges;
    }
}
