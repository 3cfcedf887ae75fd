package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import org.junit.jupiter.api.Test;

import static org.hamcrest.Matchers.contains;

/** {@code GET /v1/models}: models of live routable aggregated/decode workers, in name order. */
class ModelsEndpointTest extends GatewayTestBase {

    @Test
    void listsServedModels() {
        web.get().uri("/v1/models").exchange()
                .expectStatus().isOk()
                .expectBody()
                .jsonPath("$.object").isEqualTo("list")
                .jsonPath("$.data[*].id").value(contains("flotilla-sim", "plain-model", "queue-model", "tight-model", "tiny-model"))
                .jsonPath("$.data[0].object").isEqualTo("model")
                .jsonPath("$.data[0].owned_by").isEqualTo("flotilla")
                .jsonPath("$.data[0].created").isNumber();
    }

    @Test
    void oneModel() {
        web.get().uri("/v1/models/flotilla-sim").exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.id").isEqualTo("flotilla-sim");
    }

    @Test
    void aModelWithoutRoutableWorkersIsNotFound() {
        web.get().uri("/v1/models/ghost-model").exchange()
                .expectStatus().isNotFound()
                .expectBody()
                .jsonPath("$.error.code").isEqualTo("model_not_found")
                .jsonPath("$.error.param").isEqualTo("model");
    }
}
