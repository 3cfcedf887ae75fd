package io.flotilla.gateway.toolcall;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads one JSON object that describes a call — {@code {"name": "…", "arguments": {…}}}, the arguments
 * also under {@code parameters} — one character at a time, as a model writes it. The name is known as
 * soon as its string is closed; the arguments' text is handed out as it arrives ({@link #takeArguments});
 * other keys are skipped. Arguments written as a JSON string (an encoded object) are decoded when the
 * string closes. Anything that is not such an object ends in {@link State#FAILED}.
 */
final class JsonCallScanner {

    enum State { START, KEY_OR_END, KEY, COLON, VALUE, NAME, ARGUMENTS, ARGUMENTS_STRING, SKIP, AFTER_VALUE, DONE, FAILED }

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private State state = State.START;
    private final StringBuilder token = new StringBuilder();
    private final StringBuilder arguments = new StringBuilder();
    private String key;
    private String name;
    private boolean argumentsSeen;
    private boolean argumentsTaken;
    private boolean escaped;
    // the value being read (ARGUMENTS or SKIP): container depth, in a string, or a bare scalar
    private int depth;
    private boolean inString;
    private boolean scalar;

    State state() {
        return state;
    }

    boolean done() {
        return state == State.DONE;
    }

    boolean failed() {
        return state == State.FAILED;
    }

    /** The call's name once its string is closed, else null. */
    String name() {
        return name;
    }

    /** Arguments text read since the last call; at the end "{}" when the object had no arguments. */
    String takeArguments() {
        if (state == State.DONE && !argumentsSeen && !argumentsTaken) {
            argumentsTaken = true;
            return "{}";
        }
        String out = arguments.toString();
        arguments.setLength(0);
        return out;
    }

    /** Reads one character; after {@link State#DONE} or {@link State#FAILED} nothing more is read. */
    void accept(char c) {
        switch (state) {
            case START -> {
                if (c == '{') {
                    state = State.KEY_OR_END;
                } else if (!ws(c)) {
                    state = State.FAILED;
                }
            }
            case KEY_OR_END -> {
                if (c == '"') {
                    token.setLength(0);
                    state = State.KEY;
                } else if (c == '}') {
                    state = State.DONE;
                } else if (!ws(c)) {
                    state = State.FAILED;
                }
            }
            case KEY -> {
                if (stringChar(c)) {
                    key = decode(token);
                    state = key == null ? State.FAILED : State.COLON;
                }
            }
            case COLON -> {
                if (c == ':') {
                    state = State.VALUE;
                } else if (!ws(c)) {
                    state = State.FAILED;
                }
            }
            case VALUE -> startValue(c);
            case NAME -> {
                if (stringChar(c)) {
                    name = decode(token);
                    state = name == null || name.isEmpty() ? State.FAILED : State.AFTER_VALUE;
                }
            }
            case ARGUMENTS_STRING -> {
                if (stringChar(c)) {
                    String decoded = decode(token);
                    if (decoded == null) {
                        state = State.FAILED;
                    } else {
                        arguments.append(decoded);
                        state = State.AFTER_VALUE;
                    }
                }
            }
            case ARGUMENTS, SKIP -> valueChar(c);
            case AFTER_VALUE -> {
                if (c == ',') {
                    state = State.KEY_OR_END;
                } else if (c == '}') {
                    state = State.DONE;
                } else if (!ws(c)) {
                    state = State.FAILED;
                }
            }
            default -> {
            }
        }
    }

    private void startValue(char c) {
        if (ws(c)) {
            return;
        }
        boolean isArguments = "arguments".equals(key) || "parameters".equals(key);
        if ("name".equals(key)) {
            if (c != '"') {
                state = State.FAILED;
                return;
            }
            token.setLength(0);
            state = State.NAME;
            return;
        }
        if (isArguments && c == '"') {
            argumentsSeen = true;
            token.setLength(0);
            state = State.ARGUMENTS_STRING;
            return;
        }
        if (isArguments) {
            argumentsSeen = true;
        }
        state = isArguments ? State.ARGUMENTS : State.SKIP;
        depth = 0;
        inString = false;
        escaped = false;
        scalar = c != '{' && c != '[' && c != '"';
        valueChar(c);
    }

    /** One character of a value being read or skipped. */
    private void valueChar(char c) {
        if (scalar) {
            if (c == ',' || c == '}' || ws(c)) {
                state = State.AFTER_VALUE;
                accept(c); // the character belongs to what follows the value
                return;
            }
            keep(c);
            return;
        }
        keep(c);
        if (inString) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                inString = false;
                if (depth == 0) {
                    state = State.AFTER_VALUE;
                }
            }
            return;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
            if (depth == 0) {
                state = State.AFTER_VALUE;
            } else if (depth < 0) {
                state = State.FAILED;
            }
        }
    }

    private void keep(char c) {
        if (state == State.ARGUMENTS) {
            arguments.append(c);
        }
    }

    /** Adds a character of a JSON string's body; true at its closing quote (not kept). */
    private boolean stringChar(char c) {
        if (escaped) {
            escaped = false;
        } else if (c == '\\') {
            escaped = true;
        } else if (c == '"') {
            return true;
        }
        token.append(c);
        return false;
    }

    private static String decode(StringBuilder body) {
        try {
            return JSON.readValue("\"" + body + "\"", String.class);
        } catch (JacksonException e) {
            return null;
        }
    }

    static boolean ws(char c) {
        return c == ' ' || c == '\n' || c == '\t' || c == '\r';
    }
}
