package recoveryd

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/recoveryd/recoveryd/stubs/go/recoveryv1"
)

// fakeService answers Decide from a script and records every request.
type fakeService struct {
	recoveryv1.UnimplementedRecoveryServiceServer
	mu       sync.Mutex
	script   []*recoveryv1.DecideResponse
	decides  []*recoveryv1.DecideRequest
	outcomes []*recoveryv1.RecordOutcomeRequest
	delay    time.Duration
}

func (f *fakeService) Decide(ctx context.Context, req *recoveryv1.DecideRequest) (*recoveryv1.DecideResponse, error) {
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decides = append(f.decides, req)
	if len(f.script) == 0 {
		return nil, errors.New("script exhausted")
	}
	resp := f.script[0]
	f.script = f.script[1:]
	return resp, nil
}

func (f *fakeService) RecordOutcome(ctx context.Context, req *recoveryv1.RecordOutcomeRequest) (*recoveryv1.RecordOutcomeResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.outcomes = append(f.outcomes, req)
	return &recoveryv1.RecordOutcomeResponse{}, nil
}

func serve(t *testing.T, f *fakeService) *Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	recoveryv1.RegisterRecoveryServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, err := Dial(lis.Addr().String(), Options{ExecutorID: "test", RPCTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func action(a recoveryv1.Action) *recoveryv1.DecideResponse {
	return &recoveryv1.DecideResponse{Action: a, TimeoutMs: 1000}
}

func TestRetryThenSuccessReportsOutcomeWithPermit(t *testing.T) {
	f := &fakeService{script: []*recoveryv1.DecideResponse{
		{Action: recoveryv1.Action_ACTION_PROCEED, TimeoutMs: 1000, PermitId: "1:7"},
		{Action: recoveryv1.Action_ACTION_RETRY, DelayMs: 10, TimeoutMs: 1000, PermitId: "1:8"},
	}}
	c := serve(t, f)
	calls := 0
	res := c.Run(context.Background(), Call{ToolID: "search", TurnID: "t1", Tools: map[string]ToolFunc{
		"search": func(ctx context.Context) (any, error) {
			calls++
			if calls == 1 {
				return nil, &ToolError{Message: "503 Service Unavailable", HTTPStatus: 503}
			}
			return "ok", nil
		}}})
	if res.Status != StatusSucceeded || res.Value != "ok" || res.Attempts != 2 || !res.OutcomeRecorded {
		t.Fatalf("result %+v", res)
	}
	if len(f.decides) != 2 || f.decides[0].Error != nil || f.decides[1].GetError().GetHttpStatus() != 503 {
		t.Fatalf("decides %v", f.decides)
	}
	failed := f.decides[1]
	if failed.Attempt != 1 || failed.PermitId != "1:7" || failed.OutcomeId == "" || failed.TurnId != "t1" {
		t.Fatalf("failure report %v", failed)
	}
	rec := f.outcomes[0]
	if !rec.Success || rec.Attempt != 2 || rec.PermitId != "1:8" || rec.OutcomeId == failed.OutcomeId {
		t.Fatalf("outcome %v", rec)
	}
}

// runWithOneRetry plays one failure answered by retry, then a success, and
// returns how long the executor waited between the two calls.
func runWithOneRetry(t *testing.T, retry *recoveryv1.DecideResponse) time.Duration {
	f := &fakeService{script: []*recoveryv1.DecideResponse{action(recoveryv1.Action_ACTION_PROCEED), retry}}
	c := serve(t, f)
	var starts []time.Time
	res := c.Run(context.Background(), Call{ToolID: "search", Tools: map[string]ToolFunc{
		"search": func(ctx context.Context) (any, error) {
			starts = append(starts, time.Now())
			if len(starts) == 1 {
				return nil, &ToolError{Message: "503 Service Unavailable", HTTPStatus: 503}
			}
			return "ok", nil
		}}})
	if res.Status != StatusSucceeded || len(starts) != 2 {
		t.Fatalf("result %+v after %d calls", res, len(starts))
	}
	return starts[1].Sub(starts[0])
}

func TestRetrySleepsDelayUsWhenSent(t *testing.T) {
	waited := runWithOneRetry(t, &recoveryv1.DecideResponse{
		Action: recoveryv1.Action_ACTION_RETRY, DelayMs: 2000, DelayUs: 30000, TimeoutMs: 1000})
	if waited < 30*time.Millisecond || waited >= time.Second {
		t.Fatalf("waited %v for delay_us 30000 (delay_ms 2000)", waited)
	}
}

func TestRetrySleepsDelayMsFromAnOlderServer(t *testing.T) {
	waited := runWithOneRetry(t, &recoveryv1.DecideResponse{
		Action: recoveryv1.Action_ACTION_RETRY, DelayMs: 200, TimeoutMs: 1000})
	if waited < 200*time.Millisecond {
		t.Fatalf("waited %v for delay_ms 200", waited)
	}
}

func TestAlternativeIsCalledAndCascadeReturned(t *testing.T) {
	f := &fakeService{script: []*recoveryv1.DecideResponse{
		action(recoveryv1.Action_ACTION_PROCEED),
		{Action: recoveryv1.Action_ACTION_USE_ALTERNATIVE, AlternativeToolId: "backup", TimeoutMs: 1000},
		{Action: recoveryv1.Action_ACTION_ESCALATE, Reason: "permanent error: permission",
			Cascade: []*recoveryv1.CascadeStep{{ToolId: "book", Action: recoveryv1.CascadeAction_CASCADE_ACTION_SKIP}}},
	}}
	c := serve(t, f)
	fail := func(ctx context.Context) (any, error) { return nil, errors.New("403 Forbidden") }
	res := c.Run(context.Background(), Call{ToolID: "search", Tools: map[string]ToolFunc{"search": fail, "backup": fail}})
	if res.Status != StatusEscalate || res.ToolID != "backup" || len(res.Cascade) != 1 || res.Attempts != 2 {
		t.Fatalf("result %+v", res)
	}
	if f.decides[2].ToolId != "backup" || f.decides[2].Attempt != 1 {
		t.Fatalf("alternative's failure report %v", f.decides[2])
	}
}

func TestMissingAlternativeFunction(t *testing.T) {
	f := &fakeService{script: []*recoveryv1.DecideResponse{
		{Action: recoveryv1.Action_ACTION_USE_ALTERNATIVE, AlternativeToolId: "backup"}}}
	c := serve(t, f)
	res := c.Run(context.Background(), Call{ToolID: "search", Tools: map[string]ToolFunc{
		"search": func(ctx context.Context) (any, error) { return "x", nil }}})
	if res.Status != StatusNoAlternative || res.ToolID != "backup" || res.Attempts != 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestToolTimeoutIsSentAsTimeoutKind(t *testing.T) {
	f := &fakeService{script: []*recoveryv1.DecideResponse{
		{Action: recoveryv1.Action_ACTION_PROCEED, TimeoutMs: 50},
		action(recoveryv1.Action_ACTION_GIVE_UP),
	}}
	c := serve(t, f)
	start := time.Now()
	res := c.Run(context.Background(), Call{ToolID: "slow", Tools: map[string]ToolFunc{
		"slow": func(ctx context.Context) (any, error) { time.Sleep(2 * time.Second); return nil, nil }}})
	if res.Status != StatusGiveUp || time.Since(start) > time.Second {
		t.Fatalf("result %+v after %v", res, time.Since(start))
	}
	if f.decides[1].GetError().GetKind() != recoveryv1.ErrorKind_ERROR_KIND_TIMEOUT {
		t.Fatalf("error sent %v", f.decides[1].GetError())
	}
}

func TestUnreachableServiceFallsBackLocally(t *testing.T) {
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	c, _ := Dial(addr, Options{})
	defer c.Close()
	calls := 0
	start := time.Now()
	res := c.Run(context.Background(), Call{ToolID: "search", Tools: map[string]ToolFunc{
		"search": func(ctx context.Context) (any, error) { calls++; return nil, errors.New("boom") }}})
	if res.Status != StatusGiveUp || !res.Fallback || calls != 3 || res.FallbackReason == "" {
		t.Fatalf("result %+v calls %d", res, calls)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Fatalf("fallback took %v, expected the 100+200 ms backoff", d)
	}
}

func TestSlowServiceFallsBackAfterRPCTimeout(t *testing.T) {
	f := &fakeService{delay: time.Second, script: []*recoveryv1.DecideResponse{action(recoveryv1.Action_ACTION_PROCEED)}}
	c := serve(t, f)
	c.opts.RPCTimeout = 100 * time.Millisecond
	start := time.Now()
	res := c.Run(context.Background(), Call{ToolID: "search", Tools: map[string]ToolFunc{
		"search": func(ctx context.Context) (any, error) { return "ok", nil }}})
	if res.Status != StatusSucceeded || !res.Fallback || time.Since(start) > 700*time.Millisecond {
		t.Fatalf("result %+v after %v", res, time.Since(start))
	}
}

func TestCanceledContextStopsTheLoop(t *testing.T) {
	f := &fakeService{script: []*recoveryv1.DecideResponse{
		action(recoveryv1.Action_ACTION_PROCEED),
		{Action: recoveryv1.Action_ACTION_RETRY, DelayMs: 5000},
	}}
	c := serve(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res := c.Run(ctx, Call{ToolID: "search", Tools: map[string]ToolFunc{
		"search": func(ctx context.Context) (any, error) { return nil, errors.New("boom") }}})
	if res.Status != StatusCanceled {
		t.Fatalf("result %+v", res)
	}
}
