package io.flotilla.gateway.config;

import java.net.InetAddress;
import java.util.UUID;

/**
 * This gateway process among its replicas: host name plus a random suffix, so two replicas on one host
 * (or a restarted one) never share an id. Named in capacity watches and in load reports.
 */
public record GatewayInstance(String id) {

    static GatewayInstance create() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "gateway";
        }
        return new GatewayInstance(host + "-" + UUID.randomUUID().toString().substring(0, 8));
    }
}
