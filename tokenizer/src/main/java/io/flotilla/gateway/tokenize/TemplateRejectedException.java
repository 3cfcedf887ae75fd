package io.flotilla.gateway.tokenize;

/**
 * A chat template refused the conversation itself (Jinja's {@code raise_exception}, e.g. roles that do
 * not alternate, or a system message the model does not take): the client's input is at fault, so
 * the HTTP layer answers 400 naming {@code messages}. Any other render failure is a server error.
 */
public final class TemplateRejectedException extends RuntimeException {

    public TemplateRejectedException(String message) {
        super(message, null, false, false);
    }
}
