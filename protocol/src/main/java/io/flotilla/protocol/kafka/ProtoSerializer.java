package io.flotilla.protocol.kafka;

import com.google.protobuf.MessageLite;
import org.apache.kafka.common.serialization.Serializer;

/** Writes any protobuf message as its binary wire form. */
public class ProtoSerializer<T extends MessageLite> implements Serializer<T> {

    @Override
    public byte[] serialize(String topic, T message) {
        return message == null ? null : message.toByteArray();
    }
}
