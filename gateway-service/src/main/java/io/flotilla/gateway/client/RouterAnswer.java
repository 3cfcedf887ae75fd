package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.RouteDecision;

import java.util.Set;

/**
 * A Route answer and where it came from.
 *
 * @param decision the router's decision
 * @param router   index of the router that answered
 * @param touched  every router this call reached or may have reached (a call that timed out may still
 *                 have booked): each must get the request's Release
 */
public record RouterAnswer(RouteDecision decision, int router, Set<Integer> touched) {
}
