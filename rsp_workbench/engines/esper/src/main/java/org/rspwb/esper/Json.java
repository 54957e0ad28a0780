package org.rspwb.esper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The host's JSON lines read into Map / List / String / Long / Double / Boolean / null. Written
 * here because Jena's own parser (atlas.json) took ~140 µs for a 1.3 kB stimulus line even when
 * warm — the adapter's cost, not the engine's, so it was most of what the adapter added.
 */
final class Json {
    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    static Object parse(String text) {
        Json reader = new Json(text);
        Object value = reader.value();
        reader.space();
        if (reader.at != text.length()) {
            throw reader.error("trailing text");
        }
        return value;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object value) {
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException("expected a JSON object, got " + value);
        }
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object value) {
        if (!(value instanceof List)) {
            throw new IllegalArgumentException("expected a JSON list, got " + value);
        }
        return (List<Object>) value;
    }

    static long number(Object value) {
        if (!(value instanceof Number)) {
            throw new IllegalArgumentException("expected a number, got " + value);
        }
        return ((Number) value).longValue();
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("bad JSON from the host: " + what + " at character " + at);
    }

    private void space() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
    }

    private Object value() {
        space();
        if (at >= text.length()) {
            throw error("unexpected end");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{': {
                at++;
                Map<String, Object> map = new LinkedHashMap<>();
                space();
                if (text.charAt(at) == '}') {
                    at++;
                    return map;
                }
                while (true) {
                    space();
                    String key = string();
                    space();
                    expect(':');
                    map.put(key, value());
                    space();
                    if (text.charAt(at++) == '}') {
                        return map;
                    }
                    if (text.charAt(at - 1) != ',') {
                        throw error("expected , or }");
                    }
                }
            }
            case '[': {
                at++;
                List<Object> items = new ArrayList<>();
                space();
                if (text.charAt(at) == ']') {
                    at++;
                    return items;
                }
                while (true) {
                    items.add(value());
                    space();
                    if (text.charAt(at++) == ']') {
                        return items;
                    }
                    if (text.charAt(at - 1) != ',') {
                        throw error("expected , or ]");
                    }
                }
            }
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                return number();
        }
    }

    private void expect(char c) {
        if (at >= text.length() || text.charAt(at) != c) {
            throw error("expected " + c);
        }
        at++;
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error("unexpected character");
        }
        at += word.length();
        return value;
    }

    private Object number() {
        int start = at;
        boolean integral = true;
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c == '.' || c == 'e' || c == 'E') {
                integral = false;
            } else if (!(c == '-' || c == '+' || (c >= '0' && c <= '9'))) {
                break;
            }
            at++;
        }
        if (start == at) {
            throw error("unexpected character");
        }
        String digits = text.substring(start, at);
        return integral ? (Object) Long.parseLong(digits) : (Object) Double.parseDouble(digits);
    }

    private String string() {
        expect('"');
        int start = at;
        while (at < text.length()) { // the common case: no escapes
            char c = text.charAt(at);
            if (c == '"') {
                return text.substring(start, at++);
            }
            if (c == '\\') {
                break;
            }
            at++;
        }
        StringBuilder out = new StringBuilder(text.substring(start, at));
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = text.charAt(at++);
            switch (e) {
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> out.append(e); // \" \\ \/
            }
        }
        throw error("unterminated string");
    }
}
