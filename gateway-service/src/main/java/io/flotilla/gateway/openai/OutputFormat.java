package io.flotilla.gateway.openai;

/**
 * {@code response_format}: free text, any JSON object, or JSON valid for a schema.
 *
 * @param kind   text, json_object or json_schema
 * @param schema with {@code json_schema}: the schema as JSON text ({@code {}} when none was given)
 * @param name   with {@code json_schema}: its name
 */
public record OutputFormat(Kind kind, String schema, String name) {

    public enum Kind { TEXT, JSON_OBJECT, JSON_SCHEMA }

    public static final OutputFormat TEXT = new OutputFormat(Kind.TEXT, null, null);
}
