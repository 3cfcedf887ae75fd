package io.flotilla.worker.engine;

/**
 * An engine's step-time model as the worker learned it from the engine's own requests, in the shape
 * routers price with (see {@code EngineTiming} in workers.proto), with the number of samples behind it.
 *
 * <pre>
 * prefill_ms(t) = a·t² + b·t + c    t = prompt tokens the engine computed (not served from its cache)
 * decode_ms(u)  = d2·u² + d1·u + d0 u = KV usage fraction while decoding
 * </pre>
 */
public record TimingEstimate(double prefillA, double prefillB, double prefillC, double decodeD2, double decodeD1,
                             double decodeD0, int prefillSamples, int decodeSamples) {
}
