package io.flotilla.gateway.api;

import io.flotilla.gateway.client.ModelCatalog;
import io.flotilla.gateway.client.ServedModel;
import io.flotilla.gateway.openai.ApiError;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.time.Clock;

/**
 * {@code GET /v1/models} (models of live routable workers, from the router, cached briefly, each followed by
 * the LoRA adapters its workers serve, with {@code parent} the base model as vLLM lists them) and
 * {@code GET /v1/models/{model}} (404 {@code model_not_found} when no live worker serves it).
 */
@RestController
class ModelsController {

    private final ModelCatalog catalog;
    private final JsonMapper json;
    /** Unix seconds reported as every model's {@code created}: when this gateway started. */
    private final long created;

    ModelsController(ModelCatalog catalog, JsonMapper json, Clock clock) {
        this.catalog = catalog;
        this.json = json;
        this.created = clock.instant().getEpochSecond();
    }

    @GetMapping("/v1/models")
    Mono<ResponseEntity<String>> list() {
        return catalog.models().map(models -> {
            ObjectNode root = json.createObjectNode().put("object", "list");
            ArrayNode data = root.putArray("data");
            models.forEach(m -> {
                data.add(model(m));
                m.adapters().forEach(a -> data.add(adapter(a, m)));
            });
            return ok(root);
        });
    }

    @GetMapping("/v1/models/{model}")
    Mono<ResponseEntity<String>> one(@PathVariable String model) {
        return catalog.models().flatMap(all -> all.stream().filter(m -> m.name().equals(model)).findFirst()
                .map(m -> Mono.just(ok(model(m))))
                .or(() -> all.stream().filter(m -> m.adapters().contains(model)).findFirst()
                        .map(m -> Mono.just(ok(adapter(model, m)))))
                .orElseGet(() -> Mono.error(ApiError.modelNotFound(model))));
    }

    /** A LoRA adapter, listed as vLLM lists one: its own id, with {@code parent} naming the base model. */
    private ObjectNode adapter(String name, ServedModel base) {
        return json.createObjectNode().put("id", name).put("object", "model").put("created", created)
                .put("owned_by", "flotilla").put("parent", base.name());
    }

    private ObjectNode model(ServedModel m) {
        ObjectNode node = json.createObjectNode()
                .put("id", m.name())
                .put("object", "model")
                .put("created", created)
                .put("owned_by", "flotilla");
        if (!m.routable()) { // listed, so an operator sees why it fails; every request for it is refused
            node.putObject("flotilla_error").put("code", "model_namespace_mismatch").put("message", m.problem());
        }
        return node;
    }

    private ResponseEntity<String> ok(ObjectNode body) {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(json.writeValueAsString(body));
    }
}
