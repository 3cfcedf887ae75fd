package io.flotilla.gateway.jinja;

import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.time.temporal.ChronoField;
import java.util.Locale;

/**
 * Python's {@code datetime.strftime} in the C locale, for the {@code strftime_now} function chat
 * templates call (Llama 3.x: {@code strftime_now("%d %b %Y")} → {@code 26 Jul 2024}). Supports the
 * codes templates use: {@code %a %A %w %d %e %b %B %m %y %Y %H %I %p %M %S %f %j %z %Z %%}, and the
 * glibc {@code -} flag that drops padding ({@code %-d}). Other codes are copied through unchanged.
 */
final class PythonStrftime {

    private PythonStrftime() {
    }

    static String format(ZonedDateTime t, String format) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                out.append(c);
                continue;
            }
            boolean pad = true;
            int at = i + 1;
            if (format.charAt(at) == '-' && at + 1 < format.length()) {
                pad = false;
                at++;
            }
            String field = field(t, format.charAt(at), pad);
            if (field == null) {
                out.append(format, i, at + 1);
            } else {
                out.append(field);
            }
            i = at;
        }
        return out.toString();
    }

    private static String field(ZonedDateTime t, char code, boolean pad) {
        return switch (code) {
            case 'a' -> t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
            case 'A' -> t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH);
            case 'w' -> Integer.toString(t.getDayOfWeek().getValue() % 7);
            case 'd' -> number(t.getDayOfMonth(), 2, pad);
            case 'e' -> pad ? String.format("%2d", t.getDayOfMonth()) : Integer.toString(t.getDayOfMonth());
            case 'b' -> t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
            case 'B' -> t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH);
            case 'm' -> number(t.getMonthValue(), 2, pad);
            case 'y' -> number(t.getYear() % 100, 2, pad);
            case 'Y' -> Integer.toString(t.getYear());
            case 'H' -> number(t.getHour(), 2, pad);
            case 'I' -> number(t.getHour() % 12 == 0 ? 12 : t.getHour() % 12, 2, pad);
            case 'p' -> t.getHour() < 12 ? "AM" : "PM";
            case 'M' -> number(t.getMinute(), 2, pad);
            case 'S' -> number(t.getSecond(), 2, pad);
            case 'f' -> number(t.get(ChronoField.MICRO_OF_SECOND), 6, true);
            case 'j' -> number(t.getDayOfYear(), 3, pad);
            case 'z' -> offset(t.getOffset().getTotalSeconds());
            case 'Z' -> t.getZone().getId().equals("Z") ? "UTC" : t.getZone().getId();
            case '%' -> "%";
            default -> null;
        };
    }

    private static String number(int value, int width, boolean pad) {
        String s = Integer.toString(value);
        return pad && s.length() < width ? "0".repeat(width - s.length()) + s : s;
    }

    private static String offset(int seconds) {
        int abs = Math.abs(seconds);
        return (seconds < 0 ? "-" : "+") + number(abs / 3600, 2, true) + number(abs / 60 % 60, 2, true);
    }
}
