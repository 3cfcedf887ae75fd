package io.flotilla.gateway.client;

/**
 * A model that at least one live, routable worker serves.
 *
 * @param name      model name
 * @param blockSize KV block size its workers advertise (the most common one, should they disagree)
 * @param workers   routable workers that can run it end to end (aggregated or decode)
 */
public record ServedModel(String name, int blockSize, int workers) {
}
