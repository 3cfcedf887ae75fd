package io.flotilla.bench.workload;

/**
 * Multi-turn chat sessions with growing context. Sessions start at the times of the arrival process.
 * Turn 0's prompt is {@code contextLen} session tokens ({@code derive(TAG_SESSION_CONTEXT, seed, s)})
 * followed by {@code userLen} user tokens ({@code derive(TAG_SESSION_USER, seed, s, 0)}). Turn k+1 is
 * sent {@code thinkMs} after turn k completed, with prompt = turn k's prompt + turn k's output tokens +
 * {@code userLen} new user tokens ({@code derive(TAG_SESSION_USER, seed, s, k+1)}).
 *
 * <p>Output tokens are the ids the server streamed ({@code token_ids}, requested with
 * {@code return_token_ids}); a server that streams only text gets substitute ids instead
 * ({@code completion_tokens} tokens of {@code derive(TAG_SESSION_OUTPUT, seed, s, k)}), so the next turn
 * still reuses the previous prompt as a prefix, but not the previous output. A failed turn ends its
 * session.
 */
public final class SessionWorkload implements Workload {

    private final TokenExpander expander;
    private final int sessions;
    private final int turns;
    private final int contextLen;
    private final int userLen;
    private final int outputLen;
    private final double thinkMs;
    private final ArrivalProcess arrivals;
    private final long seed;
    private int started;

    public SessionWorkload(TokenExpander expander, int sessions, int turns, int contextLen, int userLen, int outputLen,
                           double thinkMs, ArrivalProcess arrivals, long seed) {
        if (sessions < 1 || turns < 1 || contextLen < 0 || userLen < 0 || contextLen + userLen < 1 || thinkMs < 0) {
            throw new IllegalArgumentException("session workload needs --sessions >= 1, --turns >= 1, "
                    + "--think-time-ms >= 0 and a first prompt of at least one token (--prefix-len + --suffix-len)");
        }
        this.expander = expander;
        this.sessions = sessions;
        this.turns = turns;
        this.contextLen = contextLen;
        this.userLen = userLen;
        this.outputLen = outputLen;
        this.thinkMs = thinkMs;
        this.arrivals = arrivals;
        this.seed = seed;
    }

    @Override
    public PlannedRequest next() {
        if (started >= sessions) {
            return null;
        }
        long s = started++;
        int[] first = TokenExpander.concat(
                expander.tokens(TokenExpander.derive(TokenExpander.TAG_SESSION_CONTEXT, seed, s), contextLen),
                new int[0], userTokens(s, 0));
        return new PlannedRequest(arrivals.next(), Prompt.of(first), outputLen, s, 0);
    }

    @Override
    public FollowUp followUp(PlannedRequest done, Completion completion) {
        int next = done.turn() + 1;
        if (!completion.ok() || next >= turns) {
            return null;
        }
        int[] output = completion.outputTokenIds().length > 0
                ? completion.outputTokenIds()
                : expander.tokens(TokenExpander.derive(TokenExpander.TAG_SESSION_OUTPUT, seed, done.session(), done.turn()),
                        Math.max(0, completion.completionTokens()));
        int[] prompt = TokenExpander.concat(done.prompt().tokens(), output, userTokens(done.session(), next));
        return new FollowUp(thinkMs, new PlannedRequest(0, Prompt.of(prompt), outputLen, done.session(), next));
    }

    private int[] userTokens(long session, int turn) {
        return expander.tokens(TokenExpander.derive(TokenExpander.TAG_SESSION_USER, seed, session, turn), userLen);
    }

    @Override
    public boolean wantsOutputTokenIds() {
        return true;
    }

    @Override
    public String describe() {
        return "multi-turn sessions: " + sessions + " × " + turns + " turns, context " + contextLen + " + "
                + userLen + " user tokens per turn, output " + outputLen + ", think " + thinkMs + " ms";
    }
}
