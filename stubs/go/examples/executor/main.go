// Command executor is a small tool executor that runs one tool call through
// recoveryd and prints the result as one JSON line. The cross-language
// conformance run drives it; it doubles as a complete usage example.
//
//	executor -addr 127.0.0.1:50051 -turn t1 -tool search -mode fail
//
// Modes choose the tool's behaviour: fail (always a connection reset),
// succeed, flaky (fails twice, then succeeds), hold (prints HOLDING, then
// waits until the -release file exists and succeeds).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/recoveryd/recoveryd/stubs/go/recoveryd"
	"github.com/recoveryd/recoveryd/stubs/go/recoveryv1"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "recoveryd host:port")
	turn := flag.String("turn", "", "turn id")
	tool := flag.String("tool", "search", "tool id")
	mode := flag.String("mode", "succeed", "fail | succeed | flaky | hold")
	release := flag.String("release", "", "file whose creation ends a hold")
	flag.Parse()

	client, err := recoveryd.Dial(*addr, recoveryd.Options{ExecutorID: "go-executor"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		os.Exit(2)
	}
	defer client.Close()

	calls := 0
	search := func(ctx context.Context) (any, error) {
		calls++
		switch *mode {
		case "fail":
			return nil, &recoveryd.ToolError{Message: "read tcp: connection reset by peer",
				Code: "ECONNRESET", Kind: recoveryv1.ErrorKind_ERROR_KIND_TRANSPORT_ERROR}
		case "flaky":
			if calls <= 2 {
				return nil, &recoveryd.ToolError{Message: "503 Service Unavailable", HTTPStatus: 503}
			}
		case "hold":
			fmt.Println("HOLDING")
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
				if _, err := os.Stat(*release); err == nil {
					break
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		return "results for " + *tool, nil
	}

	res := client.Run(context.Background(), recoveryd.Call{
		ToolID: *tool,
		Tools:  map[string]recoveryd.ToolFunc{*tool: search},
		TurnID: *turn,
	})

	actions := []string{}
	for _, d := range res.Decisions {
		actions = append(actions, d.Action.String())
	}
	out, _ := json.Marshal(map[string]any{
		"lang": "go", "status": res.Status, "attempts": res.Attempts, "tool_calls": calls,
		"fallback": res.Fallback, "permit": res.PermitID != "", "recorded": res.OutcomeRecorded,
		"reason": res.Reason, "actions": actions, "value": res.Value,
	})
	fmt.Println(string(out))
}
