package io.flotilla.planner.profile;

/**
 * One streamed completion as the client saw it.
 *
 * @param ttftMs time from sending the request to the first generated token
 * @param itlMs  mean time between generated tokens after the first (0 with fewer than two tokens)
 * @param tokens generated tokens
 */
public record Measurement(double ttftMs, double itlMs, int tokens) {
}
