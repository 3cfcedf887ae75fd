package io.flotilla.gateway.tokenize;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tokenization of a model from its HuggingFace model directory (a local copy of the model repository,
 * or just its tokenizer files):
 * <ul>
 *   <li>{@code tokenizer.json} (required): the tokenizer, see {@link HfTokenizer};</li>
 *   <li>{@code chat_template.jinja}, else {@code tokenizer_config.json}'s {@code chat_template} (a string,
 *       or a list of {@code {name, template}} of which {@code default} is used): the chat template,
 *       unless the configuration names a built-in one;</li>
 *   <li>{@code tokenizer_config.json}'s {@code bos_token}, {@code eos_token}, … (strings or
 *       {@code {"content": …}} objects): variables of the template.</li>
 * </ul>
 * The tokenizer id (block-hash namespace) is the configured one, else {@code name_or_path} from
 * {@code tokenizer_config.json}, else the directory's name. Every problem is an
 * {@link IllegalArgumentException} that says which model and which file.
 */
public final class HfModelDirectory {

    static final String TOKENIZER_JSON = "tokenizer.json";
    static final String TOKENIZER_CONFIG = "tokenizer_config.json";
    static final String CHAT_TEMPLATE_FILE = "chat_template.jinja";
    private static final List<String> SPECIAL_TOKEN_KEYS = List.of(
            "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private HfModelDirectory() {
    }

    /**
     * @param model       model name (for messages)
     * @param dir         the model directory
     * @param tokenizerId configured tokenizer id, or null to derive it
     * @param template    configured built-in template, or null to use the directory's Jinja template
     * @param clock       time source of the template's {@code strftime_now}
     */
    public static ModelTokenization load(String model, Path dir, String tokenizerId, ChatTemplate template, Clock clock) {
        String where = "model '" + model + "': model-dir " + dir;
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException(where + " is not a directory");
        }
        Path tokenizerJson = dir.resolve(TOKENIZER_JSON);
        if (!Files.isRegularFile(tokenizerJson)) {
            throw new IllegalArgumentException(where + " has no " + TOKENIZER_JSON + " (a HuggingFace fast tokenizer;"
                    + " transformers' AutoTokenizer.from_pretrained(…).save_pretrained(dir) writes one)");
        }
        JsonNode config = readConfig(where, dir.resolve(TOKENIZER_CONFIG));
        String id = tokenizerId != null && !tokenizerId.isBlank() ? tokenizerId
                : config.path("name_or_path").isString() && !config.path("name_or_path").asString().isBlank()
                ? config.path("name_or_path").asString() : dir.toAbsolutePath().normalize().getFileName().toString();
        ChatTemplate chat = template != null ? template : jinjaTemplate(where, dir, config, clock);
        HfTokenizer tokenizer;
        try {
            tokenizer = HfTokenizer.load(id, tokenizerJson);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("model '" + model + "': " + e.getMessage(), e);
        }
        return new ModelTokenization(tokenizer, chat);
    }

    private static JsonNode readConfig(String where, Path file) {
        if (!Files.isRegularFile(file)) {
            return JSON.createObjectNode();
        }
        try {
            JsonNode config = JSON.readTree(Files.readString(file));
            if (!config.isObject()) {
                throw new IllegalArgumentException(where + ": " + TOKENIZER_CONFIG + " is not a JSON object");
            }
            return config;
        } catch (IOException | JacksonException e) {
            throw new IllegalArgumentException(where + ": cannot read " + TOKENIZER_CONFIG + ": " + e.getMessage(), e);
        }
    }

    private static ChatTemplate jinjaTemplate(String where, Path dir, JsonNode config, Clock clock) {
        String source;
        String origin;
        Path file = dir.resolve(CHAT_TEMPLATE_FILE);
        if (Files.isRegularFile(file)) {
            try {
                source = Files.readString(file);
            } catch (IOException e) {
                throw new IllegalArgumentException(where + ": cannot read " + CHAT_TEMPLATE_FILE + ": " + e.getMessage(), e);
            }
            origin = file.toString();
        } else {
            source = templateOf(where, config.path("chat_template"));
            origin = dir.resolve(TOKENIZER_CONFIG).toString();
        }
        try {
            return JinjaChatTemplate.compile(origin, source, specialTokens(where, config), clock);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }

    private static String templateOf(String where, JsonNode template) {
        if (template.isString()) {
            return template.asString();
        }
        if (template.isArray()) {
            List<String> names = new ArrayList<>();
            for (JsonNode named : template) {
                String name = named.path("name").asString("");
                if ("default".equals(name) && named.path("template").isString()) {
                    return named.path("template").asString();
                }
                names.add(name);
            }
            throw new IllegalArgumentException(where + ": " + TOKENIZER_CONFIG + " has chat templates " + names
                    + " but none named 'default'");
        }
        throw new IllegalArgumentException(where + " has no chat template (neither " + CHAT_TEMPLATE_FILE + " nor "
                + "chat_template in " + TOKENIZER_CONFIG + "); a base model can use the built-in one: chat-template: chatml");
    }

    /** {@code bos_token}, {@code eos_token}, … as strings; AddedToken objects give their {@code content}. */
    static Map<String, String> specialTokens(String where, JsonNode config) {
        Map<String, String> tokens = new LinkedHashMap<>();
        for (String key : SPECIAL_TOKEN_KEYS) {
            JsonNode value = config.path(key);
            if (value.isString()) {
                tokens.put(key, value.asString());
            } else if (value.isObject() && value.path("content").isString()) {
                tokens.put(key, value.path("content").asString());
            } else if (!value.isMissingNode() && !value.isNull()) {
                throw new IllegalArgumentException(where + ": " + TOKENIZER_CONFIG + " " + key
                        + " is neither a string nor an object with a content: " + value);
            }
        }
        return tokens;
    }
}
