package io.flotilla.gateway.responses;

import io.flotilla.gateway.openai.ApiError;
import org.springframework.util.MultiValueMap;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * The endpoints' side of the {@link ResponseStore}: who owns a response (a SHA-256 digest of the API key, so the
 * store never holds a key), the store's operations counted, a store that cannot be reached as 503 (never as "not
 * found"), OpenAI's 404 for an unknown id, and the pages of {@code input_items}.
 */
public final class StoredResponses {

    /** Most input items per page, and the default ({@code limit}), as OpenAI pages lists. */
    static final int MAX_LIMIT = 100;
    static final int DEFAULT_LIMIT = 20;

    /**
     * A page of {@code input_items}.
     *
     * @param limit 1 … 100
     * @param desc  {@code order=desc} (the default): newest item first
     * @param after the id of the item the page starts after, or null
     */
    public record Page(int limit, boolean desc, String after) {
    }

    private final ResponseStore store;
    private final ResponsesMetrics metrics;
    private final JsonMapper json;

    public StoredResponses(ResponseStore store, ResponsesMetrics metrics, JsonMapper json) {
        this.store = store;
        this.metrics = metrics;
        this.json = json;
    }

    /** The owner of what {@code apiKey} stores: its digest ("" when the gateway has no keys, shared by every caller). */
    public static String owner(String apiKey) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(apiKey.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static ApiError notFound(String id) {
        return new ApiError(404, ApiError.INVALID_REQUEST, null, null, "Response with id '" + id + "' not found.", null);
    }

    public Mono<StoredResponse> get(String owner, String id) {
        return store.get(owner, id)
                .doOnNext(r -> metrics.store("get", "ok"))
                .switchIfEmpty(Mono.fromRunnable(() -> metrics.store("get", "missing")))
                .onErrorMap(e -> !(e instanceof ApiError), e -> unavailable("get", e));
    }

    public Mono<Void> put(StoredResponse response) {
        return store.put(response)
                .doOnSuccess(v -> metrics.store("put", "ok"))
                .doOnError(e -> metrics.store("put", "failed"));
    }

    public Mono<Boolean> delete(String owner, String id) {
        return store.delete(owner, id)
                .doOnNext(deleted -> metrics.store("delete", deleted ? "ok" : "missing"))
                .onErrorMap(e -> !(e instanceof ApiError), e -> unavailable("delete", e));
    }

    private ApiError unavailable(String operation, Throwable e) {
        metrics.store(operation, "failed");
        return ApiError.unavailable("response_store_unavailable", "The response store cannot be reached right now ("
                + e.getClass().getSimpleName() + "); retry shortly.", Duration.ofSeconds(1));
    }

    /** {@code GET /v1/responses/{id}}: {@code include} (empty) and {@code stream=false} only. */
    public static void checkRetrieveParams(MultiValueMap<String, String> query) {
        for (String key : query.keySet()) {
            List<String> values = query.get(key);
            boolean off = switch (key) {
                case "stream" -> values.stream().allMatch("false"::equals);
                case "include", "include[]" -> values.stream().allMatch(String::isEmpty);
                default -> throw ApiError.invalid(key, "Unrecognized request argument supplied: " + key);
            };
            if (!off) {
                throw ApiError.unsupported(key, "Unsupported parameter '" + key + "': stored responses are finished; "
                        + "they are returned whole, with nothing further to include.");
            }
        }
    }

    /** {@code limit}, {@code order} and {@code after} of {@code input_items}; anything else is a 400 naming it. */
    public static Page page(MultiValueMap<String, String> query) {
        for (String key : query.keySet()) {
            if (key.equals("include") || key.equals("include[]")) {
                if (!query.get(key).stream().allMatch(String::isEmpty)) {
                    throw ApiError.unsupported(key, "Unsupported parameter '" + key + "': input items carry no "
                            + "additional data to include.");
                }
            } else if (!Set.of("limit", "order", "after").contains(key)) {
                throw ApiError.invalid(key, "Unrecognized request argument supplied: " + key);
            }
        }
        int limit = DEFAULT_LIMIT;
        String l = query.getFirst("limit");
        if (l != null) {
            try {
                limit = Integer.parseInt(l);
            } catch (NumberFormatException e) {
                limit = -1;
            }
            if (limit < 1 || limit > MAX_LIMIT) {
                throw ApiError.invalid("limit", "Invalid 'limit': expected an integer from 1 to " + MAX_LIMIT
                        + ", but got '" + l + "'.");
            }
        }
        String order = query.getFirst("order");
        if (order != null && !order.equals("asc") && !order.equals("desc")) {
            throw ApiError.invalid("order", "Invalid value for 'order': '" + order + "'. Supported values are: 'asc' "
                    + "and 'desc'.");
        }
        String after = query.getFirst("after");
        return new Page(limit, !"asc".equals(order), after == null || after.isEmpty() ? null : after);
    }

    /** One page of a stored response's input items as OpenAI lists them. */
    public ObjectNode inputItems(StoredResponse response, Page page) {
        List<JsonNode> items = new ArrayList<>();
        json.readTree(response.inputItems()).forEach(items::add);
        if (page.desc()) {
            java.util.Collections.reverse(items);
        }
        int from = 0;
        if (page.after() != null) {
            from = -1;
            for (int i = 0; i < items.size(); i++) {
                if (page.after().equals(items.get(i).path("id").asString(""))) {
                    from = i + 1;
                    break;
                }
            }
            if (from < 0) {
                throw ApiError.invalid("after", "Invalid 'after': no input item '" + page.after() + "' in response '"
                        + response.id() + "'.");
            }
        }
        int to = Math.min(items.size(), from + page.limit());
        List<JsonNode> data = items.subList(from, to);
        ObjectNode list = json.createObjectNode().put("object", "list");
        list.putArray("data").addAll(data);
        list.put("first_id", data.isEmpty() ? null : data.get(0).path("id").asString());
        list.put("last_id", data.isEmpty() ? null : data.get(data.size() - 1).path("id").asString());
        list.put("has_more", to < items.size());
        return list;
    }
}
