package recoveryd

// VERIFY, idempotency keys and tenants against a live recoveryd ($RECOVERYD):
// send_email is non-idempotent with the verify tool find_sent_email;
// charge_card honours an idempotency key.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/recoveryd/recoveryd/stubs/go/recoveryv1"
)

var effectManifests = map[string]string{
	// a high breaker threshold: several tests end on an unverified failure
	"send_email": "tool:\n  id: send_email\n  effects: non_idempotent\n  verify_tool: find_sent_email\n" +
		"  circuit_breaker: {failure_threshold: 100}\n",
	"find_sent_email": "tool:\n  id: find_sent_email\n  effects: none\n  timeout_ms: 700\n",
	"charge_card":     "tool:\n  id: charge_card\n  effects: non_idempotent\n  idempotency: key\n",
}

// startRecoveryd runs $RECOVERYD with manifests and more lines of the
// server section; it is stopped when the test ends.
func startRecoveryd(t *testing.T, manifests map[string]string, server string) string {
	t.Helper()
	bin := os.Getenv("RECOVERYD")
	if bin == "" {
		t.Fatal("RECOVERYD must name a recoveryd binary (tests/stubs/run_all.sh builds one)")
	}
	dir := t.TempDir()
	rules, _ := os.ReadFile(filepath.Join("..", "..", "..", "config", "rules.yaml"))
	os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o600)
	os.Mkdir(filepath.Join(dir, "tools.d"), 0o700)
	for id, text := range manifests {
		os.WriteFile(filepath.Join(dir, "tools.d", id+".yaml"), []byte(text), 0o600)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := fmt.Sprintf(`server:
  listen: "%s"
%s
metrics:
  listen: ""
tools:
  directory: tools.d
classification:
  rules_file: rules.yaml
`, addr, server)
	runRecoveryd(t, bin, dir, addr, cfg)
	return addr
}

// resetThen is a tool reset after sending on its first call (the effect is
// unknown), returning value after; calls records each call's Attempt.
type resetThen struct {
	mu    sync.Mutex
	calls []Attempt
	value string
}

func (r *resetThen) fn(ctx context.Context) (any, error) {
	a, _ := AttemptFrom(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, a)
	if len(r.calls) == 1 {
		return nil, &ToolError{Message: "read ECONNRESET", Code: "ECONNRESET"}
	}
	return r.value, nil
}

func actions(res Result) []recoveryv1.Action {
	var out []recoveryv1.Action
	for _, d := range res.Decisions {
		out = append(out, d.Action)
	}
	return out
}

func TestVerifyAgainstLiveServer(t *testing.T) {
	addr := startRecoveryd(t, effectManifests, "")
	c, err := Dial(addr, Options{RPCTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	failures := func() uint32 {
		st, err := c.RPC.GetBreakerState(ctx, &recoveryv1.GetBreakerStateRequest{ToolIds: []string{"send_email"}})
		if err != nil {
			t.Fatal(err)
		}
		return st.Breakers[0].ConsecutiveFailures
	}
	verifyThenProceed := []recoveryv1.Action{recoveryv1.Action_ACTION_PROCEED, recoveryv1.Action_ACTION_VERIFY}

	t.Run("happened: a recorded success", func(t *testing.T) {
		tool := &resetThen{value: "sent"}
		var asked []VerifyRequest
		var verifyAttempt Attempt
		res := c.Run(ctx, Call{ToolID: "send_email", TurnID: "go-verify-1",
			Tools: map[string]ToolFunc{"send_email": tool.fn},
			Verifiers: map[string]Verifier{"find_sent_email": func(vctx context.Context, req VerifyRequest) (bool, error) {
				asked = append(asked, req)
				verifyAttempt, _ = AttemptFrom(vctx)
				if dl, ok := vctx.Deadline(); !ok || time.Until(dl) > 700*time.Millisecond {
					t.Errorf("verifier deadline %v, want the verify tool's 700 ms", dl)
				}
				return true, nil
			}}})
		if res.Status != StatusSucceeded || !res.Verified || res.Value != nil || res.Attempts != 1 || !res.OutcomeRecorded {
			t.Fatalf("result %+v", res)
		}
		if len(tool.calls) != 1 || len(asked) != 1 || res.VerifyToolID != "find_sent_email" {
			t.Fatalf("calls %v asked %v", tool.calls, asked)
		}
		req := asked[0]
		var te *ToolError
		if req.ToolID != "send_email" || req.VerifyToolID != "find_sent_email" || req.Attempt != 1 ||
			!errors.As(req.Err, &te) || !strings.Contains(req.Reason, "effect unknown") || req.TurnID != "go-verify-1" {
			t.Fatalf("verify request %+v", req)
		}
		if verifyAttempt.ToolID != "find_sent_email" {
			t.Fatalf("verifier attempt %+v", verifyAttempt)
		}
		if got := actions(res); fmt.Sprint(got) != fmt.Sprint(verifyThenProceed) {
			t.Fatalf("decisions %v", got)
		}
		if f := failures(); f != 0 {
			t.Fatalf("the verified success did not reach the breaker: %d consecutive failures", f)
		}
	})

	t.Run("did not happen: the tool runs again", func(t *testing.T) {
		tool := &resetThen{value: "sent"}
		res := c.Run(ctx, Call{ToolID: "send_email", Tools: map[string]ToolFunc{"send_email": tool.fn},
			Verify: func(context.Context, VerifyRequest) (bool, error) { return false, nil }})
		if res.Status != StatusSucceeded || res.Verified || res.Value != "sent" || res.Attempts != 2 {
			t.Fatalf("result %+v", res)
		}
		if len(tool.calls) != 2 || tool.calls[1].Number != 2 {
			t.Fatalf("calls %+v", tool.calls)
		}
		want := append(verifyThenProceed, recoveryv1.Action_ACTION_PROCEED)
		if got := actions(res); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("decisions %v", got)
		}
		if f := failures(); f != 0 {
			t.Fatalf("%d consecutive failures after the success", f)
		}
	})

	for name, call := range map[string]Call{
		"no verifier":           {},
		"none for this tool":    {Verifiers: map[string]Verifier{"other": func(context.Context, VerifyRequest) (bool, error) { return true, nil }}},
		"the verifier fails":    {Verify: func(context.Context, VerifyRequest) (bool, error) { return false, errors.New("mail API down") }},
		"the verifier overruns": {Verify: func(vctx context.Context, _ VerifyRequest) (bool, error) { <-vctx.Done(); return true, vctx.Err() }},
	} {
		t.Run(name+": verification required", func(t *testing.T) {
			tool := &resetThen{value: "sent"}
			call.ToolID, call.Tools = "send_email", map[string]ToolFunc{"send_email": tool.fn}
			res := c.Run(ctx, call)
			if res.Status != StatusVerificationRequired || len(tool.calls) != 1 || res.VerifyToolID != "find_sent_email" ||
				!strings.Contains(res.Reason, "effect unknown") ||
				!strings.Contains(res.Classification.GetLlmMessage(), "find_sent_email") ||
				res.Classification.GetEffectSafety() != recoveryv1.EffectSafety_EFFECT_SAFETY_UNKNOWN {
				t.Fatalf("result %+v, calls %v", res, tool.calls)
			}
		})
	}

	t.Run("the idempotency key reaches the tool on the retry", func(t *testing.T) {
		tool := &resetThen{value: "charged"}
		res := c.Run(ctx, Call{ToolID: "charge_card", Tools: map[string]ToolFunc{"charge_card": tool.fn},
			IdempotencyKey: "order-7731"})
		if res.Status != StatusSucceeded || res.Value != "charged" || res.IdempotencyKey != "order-7731" ||
			res.Decisions[1].Action != recoveryv1.Action_ACTION_RETRY {
			t.Fatalf("result %+v", res)
		}
		want := []Attempt{{"charge_card", 1, "order-7731"}, {"charge_card", 2, "order-7731"}}
		if fmt.Sprint(tool.calls) != fmt.Sprint(want) {
			t.Fatalf("calls %+v", tool.calls)
		}
		// Without the key the same failure is never retried blind.
		tool = &resetThen{value: "charged"}
		res = c.Run(ctx, Call{ToolID: "charge_card", Tools: map[string]ToolFunc{"charge_card": tool.fn}})
		if res.Status != StatusEscalate || len(tool.calls) != 1 || tool.calls[0].IdempotencyKey != "" {
			t.Fatalf("result %+v calls %+v", res, tool.calls)
		}
	})
}

func TestBadTenantIsRefusedLocally(t *testing.T) {
	for bad, why := range map[string]string{"a b": "only letters", strings.Repeat("x", 65): "longer than 64", "é": "only letters"} {
		if _, err := Dial("127.0.0.1:1", Options{Tenant: bad}); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("Dial with tenant %q: %v, want %q", bad, err, why)
		}
		// New cannot return the error: its calls and runs carry it.
		c := New(nil, Options{Tenant: bad})
		_, err := c.RPC.GetBreakerState(context.Background(), &recoveryv1.GetBreakerStateRequest{})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), why) {
			t.Errorf("New with tenant %q: call error %v", bad, err)
		}
		called := false
		res := c.Run(context.Background(), Call{ToolID: "t", Tools: map[string]ToolFunc{
			"t": func(context.Context) (any, error) { called = true; return nil, nil }}})
		if res.Status != StatusGiveUp || called || !strings.Contains(res.Reason, why) {
			t.Errorf("New with tenant %q: run %+v", bad, res)
		}
	}
	if err := CheckTenant("team-a.b_c"); err != nil {
		t.Fatal(err)
	}
}

func TestAdminTokenActsForTheTenantItNames(t *testing.T) {
	dir := t.TempDir()
	tokens := map[string]string{"team-a": "token-a-0123456789", "team-b": "token-b-0123456789", "admin": "token-admin-0123456789"}
	for name, tok := range tokens {
		os.WriteFile(filepath.Join(dir, name+".token"), []byte(tok), 0o600)
	}
	addr := startRecoveryd(t, map[string]string{"search": "tool:\n  id: search\n"}, fmt.Sprintf(`  tenants:
    - id: team-a
      token_file: %[1]s/team-a.token
    - id: team-b
      token_file: %[1]s/team-b.token
  admin:
    token_file: %[1]s/admin.token`, dir))
	dial := func(token, tenant string) *Client {
		c, err := Dial(addr, Options{RPCTimeout: 2 * time.Second, Token: token, Tenant: tenant})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	adminB, admin := dial(tokens["admin"], "team-b"), dial(tokens["admin"], "")
	teamA, teamB := dial(tokens["team-a"], ""), dial(tokens["team-b"], "")
	ctx := context.Background()
	n := 0
	res := adminB.Run(ctx, Call{ToolID: "search", TurnID: "tenant-turn", Tools: map[string]ToolFunc{
		"search": func(context.Context) (any, error) {
			if n++; n == 1 {
				return nil, &ToolError{Message: "503 Service Unavailable", HTTPStatus: 503}
			}
			return "ok", nil
		}}})
	if res.Status != StatusSucceeded || res.Fallback || res.Attempts != 2 {
		t.Fatalf("admin run for team-b: %+v", res)
	}
	// The run's state is team-b's: its token reads the trace, team-a's cannot.
	tr, err := teamB.RPC.GetTurnTrace(ctx, &recoveryv1.GetTurnTraceRequest{TurnId: "tenant-turn"})
	if err != nil || len(tr.Events) == 0 {
		t.Fatalf("team-b's trace: %v %v", tr, err)
	}
	if _, err := teamA.RPC.GetTurnTrace(ctx, &recoveryv1.GetTurnTraceRequest{TurnId: "tenant-turn"}); status.Code(err) != codes.NotFound {
		t.Fatalf("team-a read team-b's trace: %v", err)
	}
	_, err = admin.RPC.GetTurnTrace(ctx, &recoveryv1.GetTurnTraceRequest{TurnId: "tenant-turn"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), TenantHeader) {
		t.Fatalf("admin without a tenant: %v", err)
	}
}
