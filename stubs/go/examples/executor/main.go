// Command executor is a small tool executor that runs one tool call through
// recoveryd and prints the result as one JSON line. The cross-language
// conformance run drives it; it doubles as a complete usage example.
//
//	executor -addr 127.0.0.1:50051 -turn t1 -tool search -mode fail
//
// Modes choose the tool's behaviour: fail (always a connection reset),
// succeed, flaky (fails twice, then succeeds), hold (prints HOLDING, then
// waits until the -release file exists and succeeds), timeout-once (the
// first call times out after sending, later calls succeed).
//
// A non-idempotent tool (docs/EFFECTS.md): -verify-tool find_sent_email
// registers a verifier for that verify tool, answering -happened (true: the
// timed-out call did send; false: it did not). With server.tenants, -token
// and -tenant send the admin token and the tenant it acts for.
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
	verifyTool := flag.String("verify-tool", "", "verify tool id to register a verifier for")
	happened := flag.String("happened", "false", "what the verifier answers: true | false")
	token := flag.String("token", "", "bearer token (server.auth or server.tenants)")
	tenant := flag.String("tenant", "", "tenant the admin token acts for")
	flag.Parse()

	client, err := recoveryd.Dial(*addr, recoveryd.Options{ExecutorID: "go-executor",
		Token: *token, Tenant: *tenant})
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
		case "timeout-once":
			if calls == 1 {
				return nil, &recoveryd.ToolError{Message: "timeout after 10s waiting for the reply",
					Kind: recoveryv1.ErrorKind_ERROR_KIND_TIMEOUT}
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

	verifyCalls := 0
	verifiers := map[string]recoveryd.Verifier{}
	if *verifyTool != "" {
		verifiers[*verifyTool] = func(ctx context.Context, req recoveryd.VerifyRequest) (bool, error) {
			verifyCalls++
			return *happened == "true", nil
		}
	}

	res := client.Run(context.Background(), recoveryd.Call{
		ToolID:    *tool,
		Tools:     map[string]recoveryd.ToolFunc{*tool: search},
		TurnID:    *turn,
		Verifiers: verifiers,
	})

	actions := []string{}
	for _, d := range res.Decisions {
		actions = append(actions, d.Action.String())
	}
	out, _ := json.Marshal(map[string]any{
		"lang": "go", "status": res.Status, "attempts": res.Attempts, "tool_calls": calls,
		"fallback": res.Fallback, "permit": res.PermitID != "", "recorded": res.OutcomeRecorded,
		"reason": res.Reason, "actions": actions, "value": res.Value,
		"verified": res.Verified, "verify_tool": res.VerifyToolID, "verify_calls": verifyCalls,
	})
	fmt.Println(string(out))
}
