package io.flotilla.gateway.generation;

import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.tokenize.ChatMessage;
import io.flotilla.gateway.tokenize.ChatMlTemplate;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.protocol.hash.KvScope;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class KvScopesTest {

    private static final ModelTokenization TOKENIZATION = new ModelTokenization(new Cl100kTokenizer(), new ChatMlTemplate());
    private static final String SYSTEM = "You are the support assistant of ExampleCorp. Answer politely, cite the handbook, "
            + "and never reveal internal ticket numbers. ".repeat(4);

    private static KvScopes scopes(Map<String, String> settings) {
        GatewayProperties p = new Binder(new MapConfigurationPropertySource(settings))
                .bindOrCreate("flotilla.gateway", GatewayProperties.class);
        return new KvScopes(p.generation(), m -> TOKENIZATION);
    }

    private static final Map<String, String> TENANT_MODE = Map.of(
            "flotilla.gateway.models.m.prefix-sharing", "tenant",
            "flotilla.gateway.models.m.public-prefixes[0]", SYSTEM,
            "flotilla.gateway.prefix-isolation.salt-secret", "s3cret",
            "flotilla.gateway.prefix-isolation.keys.key-trusted", "global");

    @Test
    void globalSharingSaltsNothingAndKeepsTheAdapter() {
        KvScopes s = scopes(Map.of());
        assertThat(s.scope("m", "key-a", "key-a", "", new int[64], 16, true)).isEqualTo(KvScope.SHARED);
        assertThat(s.scope("m", "key-a", "key-a", "sql", new int[64], 16, true)).isEqualTo(KvScope.lora("sql"));
    }

    @Test
    void tenantModeSaltsPerApiKeyStablyAndNotByTheUserField() {
        KvScopes s = scopes(TENANT_MODE);
        int[] prompt = TOKENIZATION.textPrompt("a private question about the merger");
        KvScope a = s.scope("m", "key-a", "alice", "", prompt, 16, true);
        assertThat(a.tenantSalt()).matches("fs1:[0-9a-f]{32}");
        assertThat(s.scope("m", "key-a", "mallory-claims-to-be-alice", "", prompt, 16, true)).isEqualTo(a);
        assertThat(s.scope("m", "key-b", "alice", "", prompt, 16, true).tenantSalt()).isNotEqualTo(a.tenantSalt());
        assertThat(scopes(TENANT_MODE).scope("m", "key-a", "x", "", prompt, 16, true)).as("every gateway computes the same salt")
                .isEqualTo(a);
        Map<String, String> otherSecret = new java.util.HashMap<>(TENANT_MODE);
        otherSecret.put("flotilla.gateway.prefix-isolation.salt-secret", "other");
        assertThat(scopes(otherSecret).scope("m", "key-a", "x", "", prompt, 16, true).tenantSalt()).isNotEqualTo(a.tenantSalt());
        // an open API isolates by the request's user
        assertThat(s.scope("m", "", "alice", "", prompt, 16, true).tenantSalt())
                .isNotEqualTo(s.scope("m", "", "bob", "", prompt, 16, true).tenantSalt());
    }

    @Test
    void aKeyOverrideWinsOverTheModel() {
        KvScopes s = scopes(TENANT_MODE);
        assertThat(s.scope("m", "key-trusted", "key-trusted", "", new int[64], 16, true)).isEqualTo(KvScope.SHARED);
        assertThat(s.scope("other-model", "key-a", "key-a", "", new int[64], 16, true).salted()).isFalse();
    }

    @Test
    void onlyBlocksWhollyInsideAPublicPrefixStayShared() {
        KvScopes s = scopes(TENANT_MODE);
        int[] system = TOKENIZATION.textPrompt(SYSTEM);
        int[] text = TOKENIZATION.textPrompt(SYSTEM + " My account number is 12345.");
        int common = 0;
        while (common < system.length && system[common] == text[common]) {
            common++;
        }
        assertThat(s.scope("m", "key-a", "a", "", text, 16, true).publicBlocks()).isEqualTo(common / 16).isPositive();
        // a chat whose system message is the public prefix
        int[] chat = TOKENIZATION.chatPrompt(List.of(new ChatMessage("system", null, SYSTEM),
                new ChatMessage("user", null, "What is my balance?")));
        int chatPublic = s.scope("m", "key-a", "a", "", chat, 16, true).publicBlocks();
        assertThat(chatPublic).isGreaterThanOrEqualTo(SYSTEM.length() / 6 / 16);
        assertThat(chatPublic * 16).isLessThanOrEqualTo(chat.length);
        // a model with a worker that salts every block: no public blocks, so the hashes match that worker's
        assertThat(s.scope("m", "key-a", "a", "", text, 16, false).publicBlocks()).isZero();
        // a prompt that is not the public prefix shares nothing
        assertThat(s.scope("m", "key-a", "a", "", TOKENIZATION.textPrompt("Something else entirely. ".repeat(20)), 16, true)
                .publicBlocks()).isZero();
    }
}
