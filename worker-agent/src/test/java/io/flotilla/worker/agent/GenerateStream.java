package io.flotilla.worker.agent;

import io.flotilla.protocol.v1.GenerateChunk;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/** A whole {@code Generate} stream as the tests read it: every chunk, and the tokens across them. */
record GenerateStream(List<Integer> tokens, List<GenerateChunk> chunks) {

    /** Reads {@code stream} to its end. */
    static GenerateStream read(Iterator<GenerateChunk> stream) {
        List<Integer> tokens = new ArrayList<>();
        List<GenerateChunk> chunks = new ArrayList<>();
        while (stream.hasNext()) {
            GenerateChunk c = stream.next();
            chunks.add(c);
            tokens.addAll(c.getTokenIdsList());
        }
        return new GenerateStream(tokens, chunks);
    }

    GenerateChunk last() {
        return chunks.get(chunks.size() - 1);
    }
}
