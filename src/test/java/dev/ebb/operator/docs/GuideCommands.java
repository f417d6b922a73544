package dev.ebb.operator.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The commands the README and the guides give a reader, read from their fenced blocks: a {@code sh} block holds
 * commands, one a line (a trailing backslash continues it, a {@code #} starts a comment); a {@code console} block holds
 * commands after {@code $ } and, under each, what it printed. Every fence must name its language, so that no command
 * hides in a block read as plain text. {@link #CLUSTER_CHECKS} says what each kubectl command shows on the cluster tier,
 * where {@code GuideCommandsIT} runs every one of them.
 */
public final class GuideCommands {
    private static final Path README = Path.of("README.md");
    private static final Path DOCS = Path.of("docs");
    private static final Set<String> SHELL = Set.of("sh", "bash", "shell");
    private static final String CONSOLE = "console";
    private static final String PROMPT = "$ ";

    /**
     * One command: the file and line it is written on, its text (continuation lines joined, the comment stripped),
     * and what a console block shows it printing (empty elsewhere).
     */
    public record Command(String where, String text, List<String> shown) {
        public boolean isKubectl() {
            return text.startsWith("kubectl ");
        }

        @Override
        public String toString() {
            return where + ": " + text;
        }
    }

    /**
     * What a kubectl command of the docs shows on the cluster tier's control plane, with the operator running the
     * README's ModelDeployment and the installing guide's sample: every pattern is found in its output. {@code watch}
     * marks a command that does not end by itself ({@code -w}): it is read until its output shows all of them.
     */
    public record ClusterCheck(String name, Pattern command, List<Pattern> shows, boolean watch) {
        public boolean covers(Command c) {
            return command.matcher(c.text()).find();
        }
    }

    private static ClusterCheck check(String name, String command, String... shows) {
        return new ClusterCheck(
                name,
                Pattern.compile(command),
                Stream.of(shows).map(s -> Pattern.compile(s, Pattern.MULTILINE)).toList(),
                false);
    }

    private static final String MD_COLUMNS = "^NAME +AGE +ENGINE +PHASE +RETIREMENT +ROLES$";

    public static final ClusterCheck OPERATOR_DEPLOYMENT = check(
            "the operator's Deployment",
            "^kubectl get deploy\\b.*\\bebb-operator\\b",
            "^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$",
            "^ebb-operator +\\d+/1 ");
    public static final ClusterCheck SCALE_QWEN =
            check("the scale-down", "^kubectl scale md qwen\\b", "^modeldeployment.serving.ebb.dev/qwen scaled$");
    public static final ClusterCheck LIST = check(
            "the list of ModelDeployments", "^kubectl get md( -n \\S+)?$", MD_COLUMNS, "^qwen +\\S+ +vLLM +Ready +");
    public static final ClusterCheck EVENTS = check(
            "the ModelDeployment's Events",
            "^kubectl get events\\b.*involvedObject\\.name=qwen\\b",
            "^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$",
            "^\\S+ +Normal +RetirementStarted +modeldeployment/qwen +",
            "^\\S+ +Normal +Withdrawn +modeldeployment/qwen +",
            "^\\S+ +Normal +ProvenIdle +modeldeployment/qwen +",
            "^\\S+ +Normal +Completed +modeldeployment/qwen +");
    public static final ClusterCheck DESCRIBE = check(
            "conditions, then the latest Events",
            "^kubectl describe md qwen\\b",
            "^  Conditions:$",
            "^    Type: +Ready$",
            "^Events:$",
            "^  Normal +Completed +");
    public static final ClusterCheck STATUS = check(
            "the whole status",
            "^kubectl get md qwen -o yaml$",
            "^status:$",
            "^  conditions:$",
            "^  phase: Ready$",
            "^  roles:$");
    public static final ClusterCheck RETRY = check(
            "the retry of an aborted retirement",
            "^kubectl annotate md qwen serving\\.ebb\\.dev/retry-retirement=",
            "^modeldeployment.serving.ebb.dev/qwen annotated$");
    public static final ClusterCheck REFRESH = check(
            "the refresh of drain hooks and default images",
            "^kubectl annotate md qwen serving\\.ebb\\.dev/refresh-hooks=",
            "^modeldeployment.serving.ebb.dev/qwen annotated$");
    public static final ClusterCheck SAMPLE_NAMESPACE =
            check("the sample's namespace", "^kubectl create namespace demo$", "^namespace/demo created$");
    public static final ClusterCheck SAMPLE = check(
            "the kind sample",
            "^kubectl apply -n demo -f src/main/kubernetes/samples/vllm-cpu-kind\\.yaml$",
            "^modeldeployment.serving.ebb.dev/tiny created$");
    public static final ClusterCheck SAMPLE_WATCH = new ClusterCheck(
            "the sample until Ready",
            Pattern.compile("^kubectl get md -n demo -w$"),
            List.of(
                    Pattern.compile(MD_COLUMNS, Pattern.MULTILINE),
                    Pattern.compile("^tiny +\\S+ +vLLM +Ready +server 1/1$", Pattern.MULTILINE)),
            true);
    public static final ClusterCheck SAMPLE_SCALE = check(
            "the sample scaled",
            "^kubectl scale md tiny -n demo --replicas 2$",
            "^modeldeployment.serving.ebb.dev/tiny scaled$");

    /** In the order GuideCommandsIT runs them: each finds what the ones before it left. */
    public static final List<ClusterCheck> CLUSTER_CHECKS = List.of(
            OPERATOR_DEPLOYMENT,
            SCALE_QWEN,
            LIST,
            EVENTS,
            DESCRIBE,
            STATUS,
            RETRY,
            REFRESH,
            SAMPLE_NAMESPACE,
            SAMPLE,
            SAMPLE_WATCH,
            SAMPLE_SCALE);

    private GuideCommands() {}

    /** Every command of README.md and of every page under docs/, in file order. */
    public static List<Command> all() {
        List<Path> pages = new ArrayList<>(List.of(README));
        try (Stream<Path> files = Files.walk(DOCS)) {
            files.filter(f -> f.toString().endsWith(".md"))
                    .sorted(Comparator.naturalOrder())
                    .forEach(pages::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Command> commands = new ArrayList<>();
        for (Path page : pages) {
            try {
                commands.addAll(read(page.toString(), Files.readString(page)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return commands;
    }

    /** The kubectl commands of the docs, which GuideCommandsIT runs. */
    public static List<Command> kubectl() {
        return all().stream().filter(Command::isKubectl).toList();
    }

    /** The checks whose pattern the command matches: exactly one for every kubectl command of the docs. */
    public static List<ClusterCheck> checksOf(Command command) {
        return CLUSTER_CHECKS.stream().filter(c -> c.covers(command)).toList();
    }

    /** The commands of one page's fenced blocks; {@code where} names the page in each command and in the errors. */
    public static List<Command> read(String where, String markdown) {
        List<Command> commands = new ArrayList<>();
        String[] lines = markdown.split("\n", -1);
        String language = null;
        StringBuilder pending = null;
        int pendingLine = 0;
        List<String> shown = null;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (language == null) {
                if (line.startsWith("```")) {
                    language = line.substring(3).strip().split(" ")[0];
                    if (language.isEmpty()) {
                        throw new IllegalArgumentException(where + ":" + (i + 1)
                                + ": a fenced block without a language (sh, console, yaml, text, ...)");
                    }
                }
                continue;
            }
            if (line.startsWith("```")) {
                if (pending != null) {
                    throw new IllegalArgumentException(
                            where + ":" + pendingLine + ": a command continued past its block");
                }
                language = null;
                shown = null;
                continue;
            }
            boolean console = language.equals(CONSOLE);
            if (!console && !SHELL.contains(language)) {
                continue;
            }
            String text;
            if (pending != null) {
                text = line.strip();
            } else if (console && line.startsWith(PROMPT)) {
                text = line.substring(PROMPT.length()).strip();
                pendingLine = i + 1;
            } else if (console) {
                if (shown != null) {
                    shown.add(line);
                }
                continue;
            } else {
                text = line.strip();
                pendingLine = i + 1;
                if (text.isEmpty() || text.startsWith("#")) {
                    continue;
                }
            }
            String code = uncommented(text);
            if (code.endsWith("\\")) {
                pending = (pending == null ? new StringBuilder() : pending)
                        .append(code, 0, code.length() - 1)
                        .append(' ');
                continue;
            }
            String joined = (pending == null ? "" : pending.toString()) + code;
            pending = null;
            shown = new ArrayList<>();
            commands.add(new Command(
                    where + ":" + pendingLine, joined.replaceAll("\\s+", " ").strip(), shown));
        }
        if (language != null) {
            throw new IllegalArgumentException(where + ": a fenced block that is never closed");
        }
        return commands.stream()
                .map(c -> new Command(c.where(), c.text(), List.copyOf(trailingBlankless(c.shown()))))
                .toList();
    }

    /** The line without its shell comment: from a # at its start or after a blank, outside quotes. */
    private static String uncommented(String line) {
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
                return line.substring(0, i).strip();
            }
        }
        return line.strip();
    }

    private static List<String> trailingBlankless(List<String> lines) {
        int end = lines.size();
        while (end > 0 && lines.get(end - 1).isBlank()) {
            end--;
        }
        return lines.subList(0, end);
    }

    /**
     * Output with what differs from one run to the next masked: ages and times (an Event's LAST SEEN, {@code 2m5s},
     * {@code 6.1 s}), timestamps, UIDs, configuration hashes (the rendered Pods they cover name their owner's UID),
     * the random suffixes of Pods a ReplicaSet names, and replica ordinals (which of several idle replicas leaves
     * first depends on which candidate read lands in time); runs of blanks are one blank, since kubectl widens its
     * columns to their longest value.
     */
    public static String masked(String output) {
        return output.lines()
                .map(line -> line.replaceAll("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z", "<time>")
                        .replaceAll("\\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\b", "<uid>")
                        .replaceAll("-[a-z0-9]{8,10}-[a-z0-9]{5}\\b", "-<suffix>")
                        .replaceAll("\\bconfiguration [0-9a-f]{10}\\b", "configuration <hash>")
                        .replaceAll("\\breplica \\d+\\b", "replica <n>")
                        .replaceAll("-r\\d+-m\\d+\\b", "-r<n>-m<n>")
                        .replaceAll("\\b(\\d+(\\.\\d+)?(ms|s|m|h|d))+\\b", "<age>")
                        .replaceAll("\\b\\d+(\\.\\d+)? s\\b", "<age>")
                        .replaceAll("\\s+", " ")
                        .strip())
                .reduce((a, b) -> a + "\n" + b)
                .orElse("");
    }
}
