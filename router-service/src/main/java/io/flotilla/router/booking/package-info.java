/**
 * What the router's decisions leave behind, pure like the policy: {@link io.flotilla.router.booking.BookingLedger}
 * is the one writer of the active sequences ({@link io.flotilla.router.booking.ActiveSequences}), the
 * approximate prefix index ({@link io.flotilla.router.booking.ApproxIndex}) and the
 * {@link io.flotilla.router.booking.SequenceChange}s replicas share; it builds the
 * {@link io.flotilla.router.core.ClusterSnapshot} the policy decides on. Depends on
 * {@link io.flotilla.router.core}, never the reverse.
 */
package io.flotilla.router.booking;
