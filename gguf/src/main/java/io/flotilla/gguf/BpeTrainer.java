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
        List<String> symbols = new ArrayList<>();          // symbol id -> string
        Map<String, Integer> ids = new HashMap<>();
        for (int b = 0; b < 256; b++) {
            String s = String.valueOf(ByteLevel.charOf(b));
            ids.put(s, symbols.size());
            symbols.add(s);
        }
        int[][] words = new int[wordCounts.size()][];
        int[] lengths = new int[words.length];
        int[] freqs = new int[words.length];
        int w = 0;
        for (Map.Entry<String, Integer> e : wordCounts.entrySet()) {
            words[w] = e.getKey().chars().map(c -> ids.get(String.valueOf((char) c))).toArray();
            lengths[w] = words[w].length;
            freqs[w++] = e.getValue();
        }
        Set<Long> known = new HashSet<>();     // pairs whose concatenation is already a symbol
        Set<Long> fresh = new HashSet<>();     // pairs checked and found new
        List<String[]> merges = new ArrayList<>();
        while (merges.size() < count) {
            Map<Long, Integer> pairs = new HashMap<>();
            for (int i = 0; i < words.length; i++) {
                for (int j = 0; j + 1 < lengths[i]; j++) {
                    pairs.merge(pair(words[i][j], words[i][j + 1]), freqs[i], Integer::sum);
                }
            }
            long best = -1;
            int bestCount = 0;
            for (Map.Entry<Long, Integer> p : pairs.entrySet()) {
                long key = p.getKey();
                int n = p.getValue();
                if (n < bestCount || known.contains(key)) {
                    continue;
                }
                if (!fresh.contains(key)) {
                    if (ids.containsKey(concat(symbols, key))) {
                        known.add(key);
                        continue;
                    }
                    fresh.add(key);
                }
                if (n > bestCount || spelled(symbols, key).compareTo(spelled(symbols, best)) < 0) {
                    best = key;
                    bestCount = n;
                }
            }
            if (best < 0) {
                throw new IllegalStateException("the text gives only " + merges.size() + " merges, not " + count);
            }
            int left = (int) (best >>> 32);
            int right = (int) best;
            String merged = symbols.get(left) + symbols.get(right);
            int id = symbols.size();
            ids.put(merged, id);
            symbols.add(merged);
            merges.add(new String[]{symbols.get(left), symbols.get(right)});
            for (int i = 0; i < words.length; i++) {
                int[] s = words[i];
                int out = 0;
                for (int j = 0; j < lengths[i]; j++) {
                    if (j + 1 < lengths[i] && s[j] == left && s[j + 1] == right) {
                        s[out++] = id;
                        j++;
                    } else {
                        s[out++] = s[j];
                    }
                }
                lengths[i] = out;
            }
        }
        return merges;
    }

    private static long pair(int left, int right) {
        return ((long) left << 32) | right;
    }

    private static String concat(List<String> symbols, long pair) {
        return symbols.get((int) (pair >>> 32)) + symbols.get((int) pair);
    }

    /** The merge as written in the files, which orders ties. */
    private static String spelled(List<String> symbols, long pair) {
        return symbols.get((int) (pair >>> 32)) + " " + symbols.get((int) pair);
    }
}
