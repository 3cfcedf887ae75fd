package io.flotilla.indexer.core;

/**
 * One worker's answer to a prefix query.
 *
 * @param workerId      the worker
 * @param matchedBlocks how many leading blocks of the query the worker holds (at least 1)
 */
public record WorkerMatch(String workerId, int matchedBlocks) {
}
