/**
 * The edge between the wire and the routing core: protobuf messages ({@code io.flotilla.protocol.v1}) to
 * and from {@link io.flotilla.router.core} types. The core imports no protobuf; the Kafka feeds, the gRPC
 * service and the endpoint picker map through here.
 */
package io.flotilla.router.wire;
