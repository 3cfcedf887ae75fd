package io.flotilla.deploy;

import io.flotilla.bench.BenchCli;
import io.flotilla.cluster.launcher.FlotillaCli;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code bin/flotilla} command the README and the CLI reference show is one the launcher accepts as written:
 * each is parsed by the real command line ({@link FlotillaCli}'s commands, {@link BenchCli} for {@code bench}) without
 * running it, so a renamed or removed flag, a typo or a missing value fails here instead of on a user's first try.
 * Commands the launcher hands to another program ({@code profile}) are left out. That each one also starts and
 * serves is checked by hand on a fresh clone and, for the README's tier and llama.cpp lines, by whole-cluster tests.
 */
class DocumentedCommandsTest {

    private static final List<Path> DOCS = List.of(Path.of("..", "README.md"), Path.of("..", "docs", "cli.md"));
    private static final Pattern COMMAND = Pattern.compile("bin/flotilla\\s+(.*)");

    @Test
    void everyDocumentedCommandParses() throws Exception {
        List<String> failures = new ArrayList<>();
        int parsed = 0;
        for (Path doc : DOCS) {
            for (String command : commands(Files.readString(doc))) {
                List<String> args = words(command);
                if (args.isEmpty() || args.get(0).equals("profile") || args.get(0).startsWith("-")) {
                    continue;
                }
                try {
                    if (args.get(0).equals("bench")) {
                        new CommandLine(new BenchCli()).parseArgs(args.subList(1, args.size()).toArray(String[]::new));
                    } else {
                        new CommandLine(new FlotillaCli()).parseArgs(args.toArray(String[]::new));
                    }
                    parsed++;
                } catch (CommandLine.ParameterException e) {
                    failures.add(doc.getFileName() + ": bin/flotilla " + command + "\n    " + e.getMessage());
                }
            }
        }
        assertThat(parsed).as("commands found in the docs").isGreaterThan(30);
        assertThat(commands("```bash\nbin/flotilla up --workers 4 \\\n  --nope 1   # comment\n```\n"))
                .containsExactly("up --workers 4  --nope 1");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new CommandLine(new FlotillaCli())
                .parseArgs(words("up --workers 4   --nope 1").toArray(String[]::new)))
                .as("a flag the launcher does not know fails").isInstanceOf(CommandLine.ParameterException.class);
        assertThat(failures).as("documented commands the launcher refuses").isEmpty();
    }

    /** The {@code bin/flotilla …} commands of the docs' bash blocks, continuation lines joined, comments cut. */
    static List<String> commands(String markdown) {
        List<String> out = new ArrayList<>();
        boolean bash = false;
        StringBuilder line = new StringBuilder();
        for (String raw : markdown.split("\n")) {
            if (raw.startsWith("```")) {
                bash = !bash && raw.startsWith("```bash");
                continue;
            }
            if (!bash) {
                continue;
            }
            String text = raw.strip();
            if (text.endsWith("\\")) {
                line.append(text, 0, text.length() - 1).append(' ');
                continue;
            }
            line.append(text);
            for (String part : line.toString().split("&&")) {
                Matcher m = COMMAND.matcher(withoutComment(part).strip());
                if (m.lookingAt()) {
                    out.add(m.group(1).strip());
                }
            }
            line.setLength(0);
        }
        return out;
    }

    /** The line up to a {@code #} that starts a shell comment (outside quotes). */
    private static String withoutComment(String line) {
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
            } else if (c == '#' && (i == 0 || Character.isWhitespace(line.charAt(i - 1)))) {
                return line.substring(0, i);
            }
        }
        return line;
    }

    /** Shell words: whitespace-separated, single and double quotes grouping. */
    static List<String> words(String command) {
        List<String> out = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (char c : command.toCharArray()) {
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                inWord = true;
            } else if (Character.isWhitespace(c)) {
                if (inWord) {
                    out.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
            } else {
                word.append(c);
                inWord = true;
            }
        }
        if (inWord) {
            out.add(word.toString());
        }
        return out;
    }
}
