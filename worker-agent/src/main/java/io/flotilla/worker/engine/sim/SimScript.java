package io.flotilla.worker.engine.sim;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Scripted mode of the simulated engine: configured replies for chosen prompts, so tool-call and
 * reasoning parsing can be tested end to end through the real gateway and worker. A JSON file
 * ({@code flotilla.worker.sim.script}):
 *
 * <pre>
 * {"rules": [
 *   {"contains": "&lt;tool_response&gt;", "reply": "The weather in Paris is sunny."},
 *   {"regex": "(?i)weather in (\\w+)", "reply": "&lt;tool_call&gt;\n{\"name\": \"get_weather\", …}\n&lt;/tool_call&gt;"},
 *   {"prompt-hash": "9c0d6a4f3e2b1a07", "reply-tokens": [40, 1097, 264]}
 * ]}
 * </pre>
 *
 * Rules are tried in order; the first whose condition holds gives the reply. {@code contains} (a
 * substring) and {@code regex} (found anywhere) look at the prompt decoded with {@code cl100k_base}
 * (the gateway's tokenizer for simulated models: ChatML markers appear as text); {@code prompt-hash} is
 * FNV-1a-64 of the prompt's token ids (little-endian uint32) as 16 hex digits, and works with any
 * tokenizer. {@code reply} is text encoded with {@code cl100k_base}; {@code reply-tokens} are ids as
 * they are. The engine emits the reply token by token, then its end-of-sequence token (finish
 * {@code stop}), or stops at {@code max_tokens} first ({@code length}). A prompt no rule matches is
 * sampled as usual. Replies are returned as written whatever the request asks (a structured-output
 * request that a rule matches gets the rule's reply): the script is the model.
 */
public final class SimScript {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** One rule: a condition on the prompt and the reply's token ids (or text, encoded when loaded). */
    record Rule(String contains, Pattern regex, Long promptHash, String reply, int[] replyTokens) {

        boolean needsText() {
            return contains != null || regex != null || (replyTokens == null && reply != null);
        }
    }

    private final List<Rule> rules;
    private final String origin;

    private SimScript(List<Rule> rules, String origin) {
        this.rules = List.copyOf(rules);
        this.origin = origin;
    }

    /** Reads a script file; every problem is an {@link IllegalArgumentException} naming the file and rule. */
    public static SimScript load(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("sim script " + file + " cannot be read: " + e.getMessage(), e);
        }
        return parse(text, file.toString());
    }

    /** Parses a script; {@code origin} names it in errors. */
    public static SimScript parse(String json, String origin) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("sim script " + origin + " is not JSON: " + e.getOriginalMessage(), e);
        }
        JsonNode list = root.path("rules");
        if (!list.isArray()) {
            throw new IllegalArgumentException("sim script " + origin + " needs a \"rules\" array");
        }
        List<Rule> rules = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            rules.add(rule(list.get(i), origin + " rule " + i));
        }
        return new SimScript(rules, origin);
    }

    private static Rule rule(JsonNode r, String where) {
        String contains = text(r, "contains", where);
        String regexText = text(r, "regex", where);
        String hashText = text(r, "prompt-hash", where);
        int conditions = (contains != null ? 1 : 0) + (regexText != null ? 1 : 0) + (hashText != null ? 1 : 0);
        if (conditions != 1) {
            throw new IllegalArgumentException(where + ": exactly one of contains, regex, prompt-hash is needed");
        }
        Pattern regex = null;
        if (regexText != null) {
            try {
                regex = Pattern.compile(regexText);
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException(where + ": bad regex: " + e.getMessage(), e);
            }
        }
        Long hash = null;
        if (hashText != null) {
            if (!hashText.matches("[0-9a-fA-F]{16}")) {
                throw new IllegalArgumentException(where + ": prompt-hash must be 16 hex digits");
            }
            hash = HexFormat.fromHexDigitsToLong(hashText.toLowerCase(Locale.ROOT));
        }
        String reply = text(r, "reply", where);
        JsonNode tokens = r.path("reply-tokens");
        if ((reply != null) == !tokens.isMissingNode()) {
            throw new IllegalArgumentException(where + ": exactly one of reply, reply-tokens is needed");
        }
        int[] ids = null;
        if (!tokens.isMissingNode()) {
            if (!tokens.isArray()) {
                throw new IllegalArgumentException(where + ": reply-tokens must be an array of token ids");
            }
            ids = new int[tokens.size()];
            for (int i = 0; i < ids.length; i++) {
                if (!tokens.get(i).isInt() || tokens.get(i).intValue() < 0) {
                    throw new IllegalArgumentException(where + ": reply-tokens[" + i + "] is not a token id");
                }
                ids[i] = tokens.get(i).intValue();
            }
        }
        return new Rule(contains, regex, hash, reply, ids);
    }

    private static String text(JsonNode r, String field, String where) {
        JsonNode n = r.path(field);
        if (n.isMissingNode() || n.isNull()) {
            return null;
        }
        if (!n.isString()) {
            throw new IllegalArgumentException(where + ": " + field + " must be a string");
        }
        return n.stringValue();
    }

    /** Whether some rule needs the engine's text side (a text condition or a text reply). */
    boolean needsText() {
        return rules.stream().anyMatch(Rule::needsText);
    }

    /** Checks reply token ids against the engine's vocabulary. */
    void checkVocabulary(int vocabSize) {
        for (int i = 0; i < rules.size(); i++) {
            int[] ids = rules.get(i).replyTokens();
            if (ids != null) {
                for (int id : ids) {
                    if (id >= vocabSize) {
                        throw new IllegalArgumentException("sim script " + origin + " rule " + i + ": token id " + id
                                + " is outside the vocabulary [0, " + vocabSize + ")");
                    }
                }
            }
        }
    }

    /**
     * The reply to {@code prompt}, or null when no rule matches.
     *
     * @param text the engine's text side; null only when {@link #needsText()} is false
     */
    int[] reply(int[] prompt, SimText text) {
        String decoded = null;
        long hash = TokenSampler.fnv(prompt);
        for (Rule r : rules) {
            boolean match;
            if (r.promptHash() != null) {
                match = r.promptHash() == hash;
            } else {
                if (decoded == null) {
                    decoded = text.decode(prompt);
                }
                match = r.contains() != null ? decoded.contains(r.contains()) : r.regex().matcher(decoded).find();
            }
            if (match) {
                return r.replyTokens() != null ? r.replyTokens().clone() : text.encode(r.reply());
            }
        }
        return null;
    }

    /** The prompt hash a {@code prompt-hash} rule names, as 16 hex digits. */
    public static String promptHash(int[] prompt) {
        return HexFormat.of().toHexDigits(TokenSampler.fnv(prompt));
    }

    public String origin() {
        return origin;
    }
}
