package dev.ebb.operator.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ebb.operator.sandbox.Timeline.Kind;
import dev.ebb.operator.sandbox.Timeline.Mark;
import dev.ebb.operator.sim.LoadGenerator.Outcome;
import dev.ebb.operator.sim.LoadGenerator.Request;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The sandbox's page as a browser lays it out: Debian's headless Chromium loads it with a script that measures every
 * label, segment and time axis and writes what it found into the page, which Chromium then prints. Checked at a wide
 * and a narrow window; a screenshot of each is left under target/sandbox for a person to look at.
 */
class PageLayoutTest {
    private static final Instant ORIGIN = Instant.parse("2026-01-01T00:00:00Z");
    private static final Path OUT = Path.of("target", "sandbox");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LAYOUT = Pattern.compile("data-layout=\"([^\"]*)\"");
    private static final Pattern HUNG_LEFT = Pattern.compile("hang-left\" style=\"right:([0-9.]+)%");

    /**
     * Runs that push the page's edges: a load that starts late in one run and early in another, steps close together
     * and at the very end of the longest run, a long Pod name, a SIGTERM of 10 ms, a cut at the last moment.
     */
    static List<Run> awkwardRuns() {
        String longName = "a-model-deployment-with-a-long-name-decode-r12-m0";
        Run ebb = run(
                Removal.EBB,
                4,
                84,
                List.of(
                        request(0, "qwen-server-r0-m0", 5, 60, Outcome.COMPLETED),
                        request(1, longName, 6, 40, Outcome.COMPLETED)),
                List.of(
                        new Mark(3, "qwen-server-r0-m0", Kind.CREATED, ""),
                        new Mark(3.5, "qwen-server-r0-m0", Kind.SERVING, ""),
                        new Mark(3, longName, Kind.CREATED, ""),
                        new Mark(3.5, longName, Kind.SERVING, ""),
                        new Mark(14, "", Kind.STEP, "scale to 2"),
                        new Mark(14.1, longName, Kind.WITHDRAWN, ""),
                        new Mark(40.5, longName, Kind.DELETED, ""),
                        new Mark(46.5, longName, Kind.SIGTERM, ""),
                        new Mark(46.6, longName, Kind.GONE, ""),
                        new Mark(80, "", Kind.STEP, "every request has ended"),
                        new Mark(84, "", Kind.STEP, "settled")));
        Run hookOnly = run(
                Removal.HOOK_ONLY,
                21,
                80,
                List.of(request(0, "qwen-server-r3-m0", 22, 80, Outcome.CUT)),
                List.of(
                        new Mark(20, "qwen-server-r3-m0", Kind.CREATED, ""),
                        new Mark(20.5, "qwen-server-r3-m0", Kind.SERVING, ""),
                        new Mark(31, "", Kind.STEP, "scale to 2"),
                        new Mark(31, "qwen-server-r3-m0", Kind.DELETED, ""),
                        new Mark(46, "qwen-server-r3-m0", Kind.SIGTERM, ""),
                        new Mark(46.01, "qwen-server-r3-m0", Kind.GONE, ""),
                        new Mark(80, "qwen-server-r3-m0", Kind.CUT, "request 0"),
                        new Mark(79.9, "", Kind.STEP, "every request has ended"),
                        new Mark(80, "", Kind.STEP, "settled")));
        Run naive = run(
                Removal.NAIVE,
                2,
                30,
                List.of(request(0, "qwen-server-r2-m0", 3, 12.02, Outcome.CUT)),
                List.of(
                        new Mark(1, "qwen-server-r2-m0", Kind.CREATED, ""),
                        new Mark(1.5, "qwen-server-r2-m0", Kind.SERVING, ""),
                        new Mark(12, "", Kind.STEP, "scale to 2"),
                        new Mark(12, "qwen-server-r2-m0", Kind.DELETED, ""),
                        new Mark(12.01, "qwen-server-r2-m0", Kind.SIGTERM, ""),
                        new Mark(12.02, "qwen-server-r2-m0", Kind.GONE, ""),
                        new Mark(12.02, "qwen-server-r2-m0", Kind.CUT, "request 0"),
                        new Mark(29, "", Kind.STEP, "every request has ended"),
                        new Mark(30, "", Kind.STEP, "settled")));
        return List.of(ebb, hookOnly, naive);
    }

    @ParameterizedTest(name = "a window {0} px wide")
    @ValueSource(ints = {1400, 760})
    void everyLabelStaysInsideItsChartAndTheChartsShareOneTimeAxis(int width) throws Exception {
        JsonNode layout = laidOut(Page.html(awkwardRuns()), width);

        assertThat(layout.get("problems"))
                .as("what the page's own measurements found")
                .isEmpty();
        assertThat(layout.get("charts")).hasSize(3);
        assertThat(layout.get("pageWidth").asDouble())
                .as("the page's width, without a horizontal scroll bar")
                .isLessThanOrEqualTo(width);
        List<JsonNode> charts = new ArrayList<>();
        layout.get("charts").forEach(charts::add);
        for (JsonNode chart : charts) {
            // each chart's time axis starts at the same place and is as wide, and its load starts at 0 on it
            assertThat(chart.get("trackLeft").asDouble())
                    .isEqualTo(charts.get(0).get("trackLeft").asDouble());
            assertThat(chart.get("trackWidth").asDouble())
                    .isEqualTo(charts.get(0).get("trackWidth").asDouble())
                    .isGreaterThan(width / 2.0);
            assertThat(chart.get("loadStartsLeft").asDouble())
                    .isEqualTo(chart.get("trackLeft").asDouble());
            assertThat(chart.get("narrowestSegment").asDouble())
                    .as("the narrowest state segment drawn")
                    .isGreaterThanOrEqualTo(3);
            assertThat(chart.get("smallestLaneFont").asDouble())
                    .as("the lanes' names, in px")
                    .isGreaterThanOrEqualTo(11);
        }
        // the SIGTERM state, which lasts 10 ms in two runs, is on the page to be seen
        assertThat(charts).allMatch(c -> c.get("segments").toString().contains("sigterm"));
    }

    @ParameterizedTest(name = "a window {0} px wide")
    @ValueSource(ints = {1400})
    void aLabelPushedPastTheRightEdgeIsFound(int width) throws Exception {
        // the same page with every label placed to the right of its time, as before labels in the right half hung to
        // the left of it: the measurement must see "settled", at the end of the longest run, run off the chart
        String page = HUNG_LEFT
                .matcher(Page.html(awkwardRuns()))
                .replaceAll(m -> "hang-right\" style=\"left:" + (100 - Double.parseDouble(m.group(1))) + "%");

        JsonNode layout = laidOut(page, width);

        assertThat(layout.get("problems").toString()).contains("settled", "outside");
    }

    private static JsonNode laidOut(String page, int width) throws IOException, InterruptedException {
        Files.createDirectories(OUT);
        Path file = OUT.resolve("layout-check-" + width + ".html").toAbsolutePath();
        Files.writeString(file, page.replace("</body>", MEASURE + "</body>"));
        String chromium = chromium();
        Path shot = OUT.resolve("page-" + width + ".png").toAbsolutePath();
        String dom = run(List.of(
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--window-size=" + width + ",2400",
                "--dump-dom",
                file.toUri().toString()));
        run(List.of(
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--window-size=" + width + ",2400",
                "--screenshot=" + shot,
                file.toUri().toString()));
        assertThat(shot).isNotEmptyFile();
        Matcher found = LAYOUT.matcher(dom);
        assertThat(found.find())
                .as("the measurement's result in the page Chromium printed:%n%s", dom)
                .isTrue();
        return JSON.readTree(found.group(1)
                .replace("&quot;", "\"")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&"));
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Path err = Files.createTempFile("chromium", ".log");
        Process process =
                new ProcessBuilder(command).redirectError(err.toFile()).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("%s ended within 60 s", command)
                .isTrue();
        assertThat(process.exitValue())
                .as("%s exit status; its stderr:%n%s", command, Files.readString(err))
                .isZero();
        Files.delete(err);
        return out;
    }

    /** Debian's headless Chromium (package chromium-headless-shell, which .ci/run installs) or its full browser. */
    private static String chromium() {
        Optional<String> found = Stream.of("chromium-headless-shell", "chromium", "chromium-browser")
                .flatMap(name -> Stream.of(System.getenv("PATH").split(File.pathSeparator))
                        .map(dir -> Path.of(dir, name)))
                .filter(Files::isExecutable)
                .map(Path::toString)
                .findFirst();
        assertThat(found)
                .as("a headless Chromium on PATH: apt-get install chromium-headless-shell")
                .isPresent();
        return found.get();
    }

    private static Run run(
            Removal removal, double loadStarts, double seconds, List<Request> requests, List<Mark> marks) {
        List<Mark> all = new ArrayList<>(marks);
        all.add(new Mark(loadStarts, "", Kind.STEP, Timeline.LOAD_STARTS));
        all.sort(Comparator.comparingDouble(Mark::at));
        Instant changed = all.stream()
                .filter(m -> m.detail().startsWith("scale"))
                .findFirst()
                .map(m -> ORIGIN.plusMillis((long) (m.at() * 1000)))
                .orElseThrow();
        return new Run(removal, Choreography.sandbox(), ORIGIN, seconds, requests, 0, changed, all);
    }

    private static Request request(long id, String pod, double from, double to, Outcome outcome) {
        return new Request(
                id, pod, ORIGIN.plusMillis((long) (from * 1000)), ORIGIN.plusMillis((long) (to * 1000)), outcome, "");
    }

    /**
     * Measures the page where it lies and writes the result as JSON into the body's data-layout attribute: each chart's
     * time axis, its narrowest segment and smallest lane name, and every problem: a label or name outside its chart, a
     * name that overflows its box, two step labels on one line, or two ticks of the axis, that overlap.
     */
    private static final String MEASURE = """
            <script>
            (function () {
              const problems = [];
              const charts = [...document.querySelectorAll('.chart')].map((chart, c) => {
                const box = chart.getBoundingClientRect();
                chart.querySelectorAll('.label, .name').forEach(el => {
                  const r = el.getBoundingClientRect();
                  if (r.left < box.left - 0.5 || r.right > box.right + 0.5) {
                    problems.push(`chart ${c}: "${el.textContent}" spans ${r.left}-${r.right}, outside ${box.left}-${box.right}`);
                  }
                  if (el.scrollWidth > el.clientWidth + 1 && el.classList.contains('name')) {
                    problems.push(`chart ${c}: "${el.textContent}" overflows its box`);
                  }
                });
                ['.step', '.tick'].forEach(kind => {
                  const labels = [...chart.querySelectorAll(kind)].map(el => ({el, r: el.getBoundingClientRect()}));
                  labels.forEach((a, i) => labels.slice(i + 1).forEach(b => {
                    if (a.r.top === b.r.top && a.r.left < b.r.right && b.r.left < a.r.right) {
                      problems.push(`chart ${c}: "${a.el.textContent}" and "${b.el.textContent}" overlap`);
                    }
                  }));
                });
                const track = chart.querySelector('.axis .track').getBoundingClientRect();
                const loadStarts = [...chart.querySelectorAll('.step')].find(el => el.textContent === 'load starts');
                const segments = [...chart.querySelectorAll('.seg')];
                return {
                  trackLeft: track.left,
                  trackWidth: track.width,
                  loadStartsLeft: loadStarts ? loadStarts.getBoundingClientRect().left : -1,
                  narrowestSegment: Math.min(...segments.map(s => s.getBoundingClientRect().width)),
                  segments: segments.map(s => s.className),
                  smallestLaneFont: Math.min(...[...chart.querySelectorAll('.name')].map(n => parseFloat(getComputedStyle(n).fontSize)))
                };
              });
              document.body.setAttribute('data-layout', JSON.stringify({
                problems, charts, pageWidth: document.documentElement.scrollWidth
              }));
            })();
            </script>
            """;
}
