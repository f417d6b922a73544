package dev.ebb.operator.engine;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One streamed completion as a client sees it: when its response began, each token event, an error event, the final
 * {@code [DONE]}, and how its connection ended.
 *
 * @param status the HTTP status, or 0 when no response came
 * @param tokens the data events that carry a choice (one token each, or several when vLLM coalesces them)
 * @param errorEvent the data event that carries an error object instead, if one came
 * @param done whether {@code data: [DONE]} came
 * @param finishReason the last choice's finish_reason, when one came
 * @param connectionError how the exchange failed, if it did
 */
public record Stream(
        long sentNanos,
        long headersNanos,
        long endedNanos,
        int status,
        int tokens,
        String errorEvent,
        boolean done,
        String finishReason,
        String connectionError) {
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    static CompletableFuture<Stream> start(URI completions, String prompt, int maxTokens) {
        return start(completions, RealEngine.MODEL_NAME, prompt, maxTokens, new AtomicInteger());
    }

    /**
     * @param model the name the engine serves the model by
     * @param prompt words without quotes or escapes, as {@link RealEngine#prompt} makes them
     * @param progress counts the token events as they come
     */
    public static CompletableFuture<Stream> start(
            URI completions, String model, String prompt, int maxTokens, AtomicInteger progress) {
        return CompletableFuture.supplyAsync(() -> send(completions, model, prompt, maxTokens, progress));
    }

    private static Stream send(URI completions, String model, String prompt, int maxTokens, AtomicInteger progress) {
        String body = "{\"model\":\"" + model + "\",\"prompt\":\"" + prompt + "\",\"max_tokens\":" + maxTokens
                + ",\"ignore_eos\":true,\"stream\":true}";
        long sent = System.nanoTime();
        long headers = 0;
        int status = 0;
        int tokens = 0;
        String error = null;
        String finish = null;
        boolean done = false;
        try {
            HttpResponse<InputStream> response = HTTP.send(
                    HttpRequest.newBuilder(completions)
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            headers = System.nanoTime();
            status = response.statusCode();
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    if (!line.startsWith("data:")) {
                        continue;
                    }
                    String data = line.substring(5).trim();
                    if (data.equals("[DONE]")) {
                        done = true;
                    } else if (data.contains("\"error\"")) {
                        error = data;
                    } else {
                        tokens++;
                        progress.incrementAndGet();
                        int at = data.indexOf("\"finish_reason\":");
                        if (at >= 0) {
                            String rest = data.substring(at + 16);
                            finish = rest.startsWith("null") ? finish : rest.substring(1, rest.indexOf('"', 1));
                        }
                    }
                }
            }
            return new Stream(sent, headers, System.nanoTime(), status, tokens, error, done, finish, null);
        } catch (IOException e) {
            return new Stream(sent, headers, System.nanoTime(), status, tokens, error, done, finish, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Stream(sent, headers, System.nanoTime(), status, tokens, error, done, finish, e.toString());
        }
    }

    /**
     * The generation ran to the length asked for and the stream closed as a finished one does. The token events are
     * not counted against it: vLLM may put several tokens in one event when the client reads slowly (a run under load
     * got 2,999 events for 3,000 tokens).
     */
    public boolean complete() {
        return status == 200 && done && errorEvent == null && "length".equals(finishReason) && connectionError == null;
    }
}
