package io.flotilla.worker.engine.llamacpp;

import io.flotilla.gguf.BpeVocabulary;
import io.flotilla.gguf.ByteLevel;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Token ids from the text llama.cpp streams. The Java binding hands out each streamed result as text only (no token
 * ids), while a Flotilla worker streams token ids. llama.cpp sends one result per sampled token, except that it holds
 * back a token whose bytes end inside a UTF-8 character and sends it with the tokens that complete the character.
 * So a chunk that is exactly one token's bytes is that token (byte-level BPE pieces are unique); an empty chunk is a
 * control token (rendered as nothing); a chunk of several tokens is split into the fewest vocabulary pieces, greedily
 * from the longest, which gives the same bytes but may not be the ids the engine sampled: such a chunk is reported
 * {@link Pieces#exact()} false, and the worker neither counts on those ids in its cache mirror nor hides that it
 * guessed (a metric counts them).
 *
 * <p>Written here because no library maps a llama.cpp stream back to ids; the vocabulary comes from the GGUF file.
 */
final class TokenPieces {

    /** Ids for one chunk, and whether they are certainly the ones the engine sampled. */
    record Pieces(int[] ids, boolean exact) {
    }

    private final Map<String, Integer> idOfPiece = new HashMap<>();
    private final int maxPieceBytes;
    private final int eosId;
    private final int controlId;

    TokenPieces(BpeVocabulary vocab) {
        int longest = 1;
        int control = -1;
        for (int id = 0; id < vocab.tokens().size(); id++) {
            if (vocab.isSpecial(id)) {
                if (control < 0 && id != vocab.eosId() && id != vocab.bosId()) {
                    control = id;
                }
                continue;
            }
            byte[] bytes = vocab.types()[id] == BpeVocabulary.USER_DEFINED
                    ? vocab.tokens().get(id).getBytes(StandardCharsets.UTF_8) : ByteLevel.decode(vocab.tokens().get(id));
            if (bytes == null || bytes.length == 0) {
                continue;
            }
            idOfPiece.putIfAbsent(key(bytes), id);
            longest = Math.max(longest, bytes.length);
        }
        this.maxPieceBytes = longest;
        this.eosId = vocab.eosId();
        this.controlId = control >= 0 ? control : vocab.eosId();
    }

    private static String key(byte[] bytes) {
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    /** The end-of-sequence id: what an empty last chunk before the end was. */
    int eosId() {
        return eosId;
    }

    /**
     * The ids of one streamed chunk. An empty chunk is one control token; {@code last} says the stream ended right
     * after it (then it is the end-of-sequence token that stopped generation).
     */
    Pieces of(byte[] chunk, boolean last) {
        if (chunk.length == 0) {
            return new Pieces(new int[] {last ? eosId : controlId}, last);
        }
        Integer whole = idOfPiece.get(key(chunk));
        if (whole != null) {
            return new Pieces(new int[] {whole}, true);
        }
        List<Integer> ids = new ArrayList<>();
        int at = 0;
        while (at < chunk.length) {
            int len = Math.min(maxPieceBytes, chunk.length - at);
            Integer id = null;
            for (; len > 0; len--) {
                id = idOfPiece.get(new String(chunk, at, len, StandardCharsets.ISO_8859_1));
                if (id != null) {
                    break;
                }
            }
            if (id == null) {
                throw new IllegalStateException("byte " + (chunk[at] & 0xFF) + " has no token in the vocabulary");
            }
            ids.add(id);
            at += len;
        }
        return new Pieces(ids.stream().mapToInt(Integer::intValue).toArray(), false);
    }
}
