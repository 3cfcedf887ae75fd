package io.flotilla.gateway.jinja;

import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Python's {@code str} methods on strings in Jinja expressions. HuggingFace renders chat templates with
 * Python's Jinja, where {@code message.content.startswith('<tool_response>')} or
 * {@code content.split('</think>')[-1].lstrip('\n')} just work; Jinjava would call Java's methods
 * instead (no {@code startswith}; {@code split} takes a regex). This resolver answers those calls with
 * Python's semantics and leaves every other call to the resolvers after it.
 */
final class PythonStringMethods extends ELResolver {

    private static final Set<String> METHODS = Set.of("startswith", "endswith", "strip", "lstrip", "rstrip",
            "split", "rsplit", "splitlines", "upper", "lower", "title", "capitalize", "replace", "find", "rfind",
            "count", "join", "isspace", "isdigit", "isalpha", "isalnum", "isupper", "islower");

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (!(base instanceof CharSequence chars) || !(method instanceof String name) || !METHODS.contains(name)) {
            return null;
        }
        Object result = call(chars.toString(), name, params == null ? new Object[0] : params);
        context.setPropertyResolved(true);
        return result;
    }

    static Object call(String s, String name, Object[] args) {
        return switch (name) {
            case "startswith" -> affix(s, arg(args, 0), true);
            case "endswith" -> affix(s, arg(args, 0), false);
            case "strip" -> rstrip(lstrip(s, str(args, 0)), str(args, 0));
            case "lstrip" -> lstrip(s, str(args, 0));
            case "rstrip" -> rstrip(s, str(args, 0));
            case "split" -> split(s, str(args, 0), maxSplit(args), false);
            case "rsplit" -> split(s, str(args, 0), maxSplit(args), true);
            case "splitlines" -> List.of(s.split("\r\n|\r|\n", -1)).subList(0, lines(s));
            case "upper" -> s.toUpperCase(java.util.Locale.ROOT);
            case "lower" -> s.toLowerCase(java.util.Locale.ROOT);
            case "title" -> title(s);
            case "capitalize" -> s.isEmpty() ? s
                    : s.substring(0, 1).toUpperCase(java.util.Locale.ROOT) + s.substring(1).toLowerCase(java.util.Locale.ROOT);
            case "replace" -> replace(s, required(args, 0, name), required(args, 1, name),
                    args.length > 2 ? ((Number) args[2]).intValue() : -1);
            case "find" -> s.indexOf(required(args, 0, name));
            case "rfind" -> s.lastIndexOf(required(args, 0, name));
            case "count" -> count(s, required(args, 0, name));
            case "join" -> join(s, arg(args, 0));
            case "isspace" -> !s.isEmpty() && s.chars().allMatch(PythonStringMethods::isSpace);
            case "isdigit" -> !s.isEmpty() && s.chars().allMatch(Character::isDigit);
            case "isalpha" -> !s.isEmpty() && s.chars().allMatch(Character::isLetter);
            case "isalnum" -> !s.isEmpty() && s.chars().allMatch(Character::isLetterOrDigit);
            case "isupper" -> s.chars().anyMatch(Character::isUpperCase) && s.chars().noneMatch(Character::isLowerCase);
            case "islower" -> s.chars().anyMatch(Character::isLowerCase) && s.chars().noneMatch(Character::isUpperCase);
            default -> throw new IllegalStateException(name);
        };
    }

    private static Object arg(Object[] args, int i) {
        return i < args.length ? args[i] : null;
    }

    private static String str(Object[] args, int i) {
        Object a = arg(args, i);
        return a == null ? null : a.toString();
    }

    private static String required(Object[] args, int i, String method) {
        String a = str(args, i);
        if (a == null) {
            throw new IllegalArgumentException("str." + method + "() is missing argument " + (i + 1));
        }
        return a;
    }

    private static int maxSplit(Object[] args) {
        Object a = arg(args, 1);
        return a == null ? -1 : ((Number) a).intValue();
    }

    private static boolean affix(String s, Object affixes, boolean prefix) {
        if (affixes instanceof Iterable<?> several) { // Python accepts a tuple of candidates
            for (Object a : several) {
                if (prefix ? s.startsWith(String.valueOf(a)) : s.endsWith(String.valueOf(a))) {
                    return true;
                }
            }
            return false;
        }
        String a = String.valueOf(affixes);
        return prefix ? s.startsWith(a) : s.endsWith(a);
    }

    /** Python's {@code str.isspace} set: Unicode whitespace and separators, plus U+001C–U+001F and U+0085. */
    static boolean isSpace(int c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c) || c == 0x85;
    }

    private static boolean stripped(int c, String chars) {
        return chars == null ? isSpace(c) : chars.indexOf(c) >= 0;
    }

    private static String lstrip(String s, String chars) {
        int i = 0;
        while (i < s.length() && stripped(s.charAt(i), chars)) {
            i++;
        }
        return s.substring(i);
    }

    private static String rstrip(String s, String chars) {
        int i = s.length();
        while (i > 0 && stripped(s.charAt(i - 1), chars)) {
            i--;
        }
        return s.substring(0, i);
    }

    private static List<String> split(String s, String sep, int maxSplit, boolean fromRight) {
        if (sep != null && sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        List<String> parts = new ArrayList<>();
        if (sep == null) { // runs of whitespace, no empty strings
            List<int[]> words = new ArrayList<>();
            int i = 0;
            while (i < s.length()) {
                while (i < s.length() && isSpace(s.charAt(i))) {
                    i++;
                }
                int start = i;
                while (i < s.length() && !isSpace(s.charAt(i))) {
                    i++;
                }
                if (i > start) {
                    words.add(new int[]{start, i});
                }
            }
            if (maxSplit < 0 || words.size() <= maxSplit + 1) {
                words.forEach(w -> parts.add(s.substring(w[0], w[1])));
            } else if (!fromRight) {
                for (int w = 0; w < maxSplit; w++) {
                    parts.add(s.substring(words.get(w)[0], words.get(w)[1]));
                }
                parts.add(rstrip(s.substring(words.get(maxSplit)[0]), null));
            } else {
                int keep = words.size() - maxSplit;
                parts.add(lstrip(s.substring(0, words.get(keep - 1)[1]), null));
                for (int w = keep; w < words.size(); w++) {
                    parts.add(s.substring(words.get(w)[0], words.get(w)[1]));
                }
            }
            return parts;
        }
        if (!fromRight) {
            int from = 0;
            int at;
            while ((maxSplit < 0 || parts.size() < maxSplit) && (at = s.indexOf(sep, from)) >= 0) {
                parts.add(s.substring(from, at));
                from = at + sep.length();
            }
            parts.add(s.substring(from));
            return parts;
        }
        int to = s.length();
        int at;
        while ((maxSplit < 0 || parts.size() < maxSplit) && (at = s.lastIndexOf(sep, to - sep.length())) >= 0) {
            parts.add(s.substring(at + sep.length(), to));
            to = at;
        }
        parts.add(s.substring(0, to));
        Collections.reverse(parts);
        return parts;
    }

    /** Python drops the empty string after a final line break; {@code "".splitlines()} is empty. */
    private static int lines(String s) {
        String[] all = s.split("\r\n|\r|\n", -1);
        return all.length > 0 && all[all.length - 1].isEmpty() ? all.length - 1 : all.length;
    }

    private static String title(String s) {
        StringBuilder out = new StringBuilder(s.length());
        boolean previousCased = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            out.append(previousCased ? Character.toLowerCase(c) : Character.toUpperCase(c));
            previousCased = Character.isLetter(c);
        }
        return out.toString();
    }

    private static String replace(String s, String old, String replacement, int count) {
        if (count < 0) {
            return s.replace(old, replacement);
        }
        StringBuilder out = new StringBuilder();
        int from = 0;
        for (int done = 0; done < count; done++) {
            if (old.isEmpty()) { // Python inserts before each character (and at the end)
                if (from > s.length()) {
                    break;
                }
                out.append(replacement);
                if (from < s.length()) {
                    out.append(s.charAt(from));
                }
                from++;
                continue;
            }
            int at = s.indexOf(old, from);
            if (at < 0) {
                break;
            }
            out.append(s, from, at).append(replacement);
            from = at + old.length();
        }
        return from < s.length() ? out.append(s, from, s.length()).toString() : out.toString();
    }

    private static int count(String s, String sub) {
        if (sub.isEmpty()) {
            return s.length() + 1;
        }
        int n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
            n++;
        }
        return n;
    }

    private static String join(String sep, Object items) {
        if (!(items instanceof Iterable<?> iterable)) {
            throw new IllegalArgumentException("str.join() needs a list, got " + items);
        }
        StringBuilder out = new StringBuilder();
        boolean first = true;
        for (Object item : iterable) {
            if (!first) {
                out.append(sep);
            }
            out.append(item);
            first = false;
        }
        return out.toString();
    }

    // Only method calls are answered here; property access is left to the other resolvers.

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {
        // never resolves a property, so never asked to set one
    }
}
