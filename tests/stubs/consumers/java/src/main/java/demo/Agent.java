// A fresh project's executor on the installed artifact: the tool fails once,
// then answers; prints "<STATUS> attempts=<n> fallback=<bool>".
package demo;

import io.recoveryd.client.*;
import java.time.Duration;
import java.util.Map;

public class Agent {
    public static void main(String[] args) {
        int[] n = {0};
        try (RecoveryClient client = new RecoveryClient(args[0], Duration.ofSeconds(2), "java-user", FallbackPolicy.DEFAULT)) {
            RunResult<String> res = client.runTool("weather", Map.of("weather", (ToolFunction<String>) timeoutMs -> {
                if (++n[0] < 2) throw new java.net.SocketException("Connection reset");
                return "3C";
            }), RunOptions.turn("java-user"));
            System.out.println(res.status().toString().toLowerCase() + " attempts=" + res.attempts() + " fallback=" + res.fallback());
        }
    }
}
