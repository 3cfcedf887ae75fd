package io.flotilla.gateway.jinja;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Python's {@code json.dumps(x, ensure_ascii=False, indent=…, separators=…, sort_keys=…)}, which is what
 * HuggingFace's chat-template {@code tojson} filter calls: {@code ", "} and {@code ": "} between items
 * and keys (or {@code ","} and {@code ": "} with an indent), non-ASCII text as is, maps in their
 * iteration order. Templates print tool schemas and arguments with it, so the bytes must match.
 */
public final class PythonJson {

    private PythonJson() {
    }

    /**
     * @param indent     spaces per level, or null for one line
     * @param separators item and key separators, or null for Python's defaults
     */
    public static String dumps(Object value, Integer indent, List<String> separators, boolean sortKeys) {
        String itemSep = indent == null ? ", " : ",";
        String keySep = ": ";
        if (separators != null) {
            if (separators.size() != 2) {
                throw new IllegalArgumentException("tojson: separators must be a pair, got " + separators);
            }
            itemSep = separators.get(0);
            keySep = separators.get(1);
        }
        StringBuilder out = new StringBuilder();
        write(out, value, indent, itemSep, keySep, sortKeys, 0);
        return out.toString();
    }

    private static void write(StringBuilder out, Object v, Integer indent, String itemSep, String keySep,
                              boolean sortKeys, int level) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof Boolean b) {
            out.append(b ? "true" : "false");
        } else if (v instanceof Double || v instanceof Float) {
            out.append(pythonFloat(((Number) v).doubleValue()));
        } else if (v instanceof BigDecimal d) {
            out.append(pythonFloat(d.doubleValue()));
        } else if (v instanceof Number n) { // Long, Integer, BigInteger, …
            out.append(n instanceof BigInteger ? n.toString() : Long.toString(n.longValue()));
        } else if (v instanceof CharSequence s) {
            quote(out, s.toString());
        } else if (v instanceof Map<?, ?> map) {
            List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
            if (sortKeys) {
                entries.sort((a, b) -> String.valueOf(a.getKey()).compareTo(String.valueOf(b.getKey())));
            }
            if (entries.isEmpty()) {
                out.append("{}");
                return;
            }
            out.append('{');
            for (int i = 0; i < entries.size(); i++) {
                out.append(i == 0 ? "" : itemSep);
                newline(out, indent, level + 1);
                quote(out, key(entries.get(i).getKey()));
                out.append(keySep);
                write(out, entries.get(i).getValue(), indent, itemSep, keySep, sortKeys, level + 1);
            }
            newline(out, indent, level);
            out.append('}');
        } else if (v instanceof Iterable<?> items) {
            List<Object> list = new ArrayList<>();
            items.forEach(list::add);
            writeArray(out, list, indent, itemSep, keySep, sortKeys, level);
        } else if (v instanceof Object[] array) {
            writeArray(out, List.of(array), indent, itemSep, keySep, sortKeys, level);
        } else {
            quote(out, v.toString());
        }
    }

    private static void writeArray(StringBuilder out, List<?> list, Integer indent, String itemSep, String keySep,
                                   boolean sortKeys, int level) {
        if (list.isEmpty()) {
            out.append("[]");
            return;
        }
        out.append('[');
        for (int i = 0; i < list.size(); i++) {
            out.append(i == 0 ? "" : itemSep);
            newline(out, indent, level + 1);
            write(out, list.get(i), indent, itemSep, keySep, sortKeys, level + 1);
        }
        newline(out, indent, level);
        out.append(']');
    }

    /** Python converts non-string keys: True → "true", None → "null", numbers as their JSON text. */
    private static String key(Object k) {
        if (k == null) {
            return "null";
        }
        if (k instanceof Boolean b) {
            return b ? "true" : "false";
        }
        if (k instanceof Double || k instanceof Float) {
            return pythonFloat(((Number) k).doubleValue());
        }
        return k.toString();
    }

    private static void newline(StringBuilder out, Integer indent, int level) {
        if (indent != null) {
            out.append('\n').append(" ".repeat(indent * level));
        }
    }

    /** JSON string with Python's escapes under {@code ensure_ascii=False}: only quote, backslash and controls. */
    static void quote(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** Python's {@code repr(float)}: shortest round-trip digits, {@code 1.0}, {@code 1e-05}, {@code 1e+16}. */
    static String pythonFloat(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        if (d == 0) {
            return 1 / d < 0 ? "-0.0" : "0.0";
        }
        BigDecimal exact = new BigDecimal(Double.toString(d)).stripTrailingZeros();
        String digits = exact.unscaledValue().abs().toString();
        int exponent = digits.length() - 1 - exact.scale(); // position of the first digit
        String sign = d < 0 ? "-" : "";
        if (exponent >= -4 && exponent < 16) {
            String plain = exact.abs().toPlainString();
            return sign + (plain.contains(".") ? plain : plain + ".0");
        }
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + String.format("%02d", Math.abs(exponent));
    }
}
