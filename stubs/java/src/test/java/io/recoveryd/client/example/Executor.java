package io.recoveryd.client.example;

import io.recoveryd.client.FallbackPolicy;
import io.recoveryd.client.RecoveryClient;
import io.recoveryd.client.RunOptions;
import io.recoveryd.client.RunResult;
import io.recoveryd.client.ToolFailure;
import io.recoveryd.client.ToolFunction;
import io.recoveryd.v1.ErrorKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A small tool executor that runs one tool call through recoveryd and prints the
 * result as one JSON line. The cross-language conformance run drives it; it
 * doubles as a complete usage example.
 *
 * <pre>java ... io.recoveryd.client.example.Executor --addr 127.0.0.1:50051 --turn t1 --tool search --mode fail</pre>
 *
 * Modes choose the tool's behaviour: fail (always a connection reset), succeed,
 * flaky (fails twice, then succeeds), hold (prints HOLDING, then waits until
 * the --release file exists and succeeds), timeout-once (the first call times
 * out after sending, later calls succeed).
 *
 * <p>A non-idempotent tool (docs/EFFECTS.md): {@code --verify-tool find_sent_email}
 * registers a verifier for that verify tool, answering {@code --happened}
 * (true: the timed-out call did send; false: it did not). With server.tenants,
 * {@code --token} and {@code --tenant} send the admin token and the tenant it
 * acts for.
 */
public final class Executor {
    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>(Map.of(
                "addr", "127.0.0.1:50051", "turn", "", "tool", "search", "mode", "succeed", "release", ""));
        args.putAll(Map.of("verify-tool", "", "happened", "false", "token", "", "tenant", ""));
        for (int i = 0; i + 1 < argv.length; i += 2) {
            args.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        }
        String tool = args.get("tool");
        String mode = args.get("mode");
        int[] calls = {0};
        int[] verifyCalls = {0};
        ToolFunction<String> search = timeoutMs -> {
            calls[0]++;
            switch (mode) {
                case "fail" -> throw ToolFailure.code("read tcp: connection reset by peer", "ECONNRESET",
                        ErrorKind.ERROR_KIND_TRANSPORT_ERROR);
                case "flaky" -> {
                    if (calls[0] <= 2) {
                        throw ToolFailure.http("503 Service Unavailable", 503);
                    }
                }
                case "timeout-once" -> {
                    if (calls[0] == 1) {
                        throw new ToolFailure("timeout after 10s waiting for the reply", ErrorKind.ERROR_KIND_TIMEOUT);
                    }
                }
                case "hold" -> {
                    System.out.println("HOLDING");
                    System.out.flush();
                    long end = System.currentTimeMillis() + Math.min(timeoutMs, 20_000);
                    while (!Files.exists(Path.of(args.get("release"))) && System.currentTimeMillis() < end) {
                        Thread.sleep(20);
                    }
                }
                default -> { }
            }
            return "results for " + tool;
        };

        RunOptions options = RunOptions.turn(args.get("turn"));
        if (!args.get("verify-tool").isEmpty()) {
            boolean happened = Boolean.parseBoolean(args.get("happened"));
            options = options.withVerifiers(Map.of(args.get("verify-tool"), req -> {
                verifyCalls[0]++;
                return happened;
            }));
        }

        RunResult<String> res;
        // 1 s, not the 200 ms default: this process's first call loads the gRPC and message
        // classes inside its deadline, which took over 100 ms on a loaded two-core machine and
        // sent the run to its local fallback.
        try (RecoveryClient client = new RecoveryClient(args.get("addr"), Duration.ofSeconds(1),
                "java-executor", FallbackPolicy.DEFAULT, args.get("token"), args.get("tenant"))) {
            res = client.runTool(tool, Map.of(tool, search), options);
        }
        String actions = res.decisions().stream().map(d -> "\"" + d.action().name() + "\"")
                .collect(Collectors.joining(","));
        System.out.println("{\"lang\":\"java\",\"status\":\"" + res.status().name().toLowerCase()
                + "\",\"attempts\":" + res.attempts() + ",\"tool_calls\":" + calls[0]
                + ",\"fallback\":" + res.fallback() + ",\"permit\":" + !res.permitId().isEmpty()
                + ",\"recorded\":" + res.outcomeRecorded() + ",\"reason\":\"" + res.reason().replace("\"", "'")
                + "\",\"fallback_reason\":\"" + res.fallbackReason().replace("\"", "'")
                + "\",\"verified\":" + res.verified() + ",\"verify_tool\":\"" + res.verifyToolId()
                + "\",\"verify_calls\":" + verifyCalls[0] + ",\"actions\":[" + actions + "]}");
    }
}
