package io.flotilla.router.epp;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The endpoint a worker is reached at, and what the picker reads of a body: tables of literal inputs. */
class EndpointPickerTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "10.1.2.3:7100 | 8000 | 10.1.2.3:8000",
            "[fd00::5]:7100 | 8000 | [fd00::5]:8000",
            "worker-0.local:7100 | 8080 | worker-0.local:8080",
            "10.1.2.3:7100 | 0 | 10.1.2.3:7100",
            "[fd00::5]:7100 | 0 | [fd00::5]:7100"})
    void aWorkersEndpointIsItsRegisteredHostAndThePoolsTargetPort(String registered, int targetPort, String expected) {
        EppSettings settings = new EppSettings(true, 0, targetPort, "FailClose", DataSize.ofMegabytes(4), 2, 256, Map.of());
        assertThat(new EndpointPicker(null, null, settings).endpoint(registered)).isEqualTo(expected);
    }

    @Test
    void bodiesInTheirThreeShapes() {
        OpenAiBody chat = OpenAiBody.parse(bytes("{\"model\":\"m\",\"max_completion_tokens\":9,\"messages\":["
                + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]}],"
                + "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}"));
        assertThat(chat.messages().get(0).content()).as("parts joined as the gateway joins them").isEqualTo("a\nb");
        assertThat(chat.tools()).hasSize(1);
        assertThat(chat.maxTokens()).isEqualTo(9);
        assertThat(OpenAiBody.parse(bytes("{\"model\":\"m\",\"prompt\":\"hi\",\"max_tokens\":3}")).text()).isEqualTo("hi");
        assertThat(OpenAiBody.parse(bytes("{\"model\":\"m\",\"prompt\":[5,6,7]}")).tokenIds()).containsExactly(5, 6, 7);
        assertThatThrownBy(() -> OpenAiBody.parse(bytes("{\"prompt\":\"x\"}"))).hasMessageContaining("'model'");
        assertThatThrownBy(() -> OpenAiBody.parse(bytes("not json"))).isInstanceOf(OpenAiBody.Unreadable.class);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
