package io.flotilla.transfer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A message from a remote agent: sent on its own ({@link TransferAgent#sendNotification}) or
 * attached to a read or write, in which case it is queued only after the bytes have moved.
 *
 * @param agent   name of the sending agent
 * @param payload the bytes it sent (owned by this record; do not modify)
 */
public record Notification(String agent, byte[] payload) {

    public String text() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Notification n && n.agent.equals(agent) && Arrays.equals(n.payload, payload);
    }

    @Override
    public int hashCode() {
        return agent.hashCode() * 31 + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "Notification[" + agent + ", " + payload.length + " bytes]";
    }
}
