package io.flotilla.router.core;

/**
 * The load this router (and the replicas it syncs with) booked on one worker and has not seen
 * released: the {@link ActiveSequences} view of a worker. Immutable.
 *
 * @param prefillTokens   new prompt tokens of booked requests whose prefill on this worker is not done
 * @param prefillRequests booked requests whose prefill on this worker is not done
 * @param decodeBlocks    KV blocks booked requests add on this worker as their decode worker
 * @param decodeRequests  booked requests decoding (or going to decode) on this worker
 */
public record ActiveLoad(long prefillTokens, int prefillRequests, long decodeBlocks, int decodeRequests) {

    public static final ActiveLoad NONE = new ActiveLoad(0, 0, 0, 0);

    public ActiveLoad plus(ActiveLoad d, int sign) {
        return new ActiveLoad(prefillTokens + sign * d.prefillTokens, prefillRequests + sign * d.prefillRequests,
                decodeBlocks + sign * d.decodeBlocks, decodeRequests + sign * d.decodeRequests);
    }

    public boolean isEmpty() {
        return prefillTokens == 0 && prefillRequests == 0 && decodeBlocks == 0 && decodeRequests == 0;
    }
}
