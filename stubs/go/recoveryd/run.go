package recoveryd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/recoveryd/recoveryd/stubs/go/recoveryv1"
)

// ToolFunc performs one tool call. It must give up when ctx is done; ctx
// carries the hard timeout the service returned. The returned value is handed
// back in Result.Value.
type ToolFunc func(ctx context.Context) (any, error)

// ToolError is an error a ToolFunc may return to give the service structured
// signals (HTTP status, errno name, typed kind ...) beside the message.
// Any other error is sent as its message and Go type.
type ToolError struct {
	Message       string
	HTTPStatus    int32
	GRPCCode      int32
	Code          string // errno or API code: ECONNRESET, insufficient_quota
	ExceptionType string
	Kind          recoveryv1.ErrorKind
	Source        recoveryv1.ErrorSource
	RetryAfter    time.Duration
}

func (e *ToolError) Error() string { return e.Message }

// Call describes one logical tool call.
type Call struct {
	ToolID string
	// Tools maps every tool id Run may call (the tool and its alternatives)
	// to its implementation.
	Tools  map[string]ToolFunc
	TurnID string
	// TurnDeadline, when set, is sent as the turn's remaining budget;
	// otherwise the service keeps the turn clock.
	TurnDeadline time.Time
	// Plan lists the turn's tools for cascade decisions; nil: the service
	// uses its manifests' dependency graph.
	Plan []*recoveryv1.PlanStep
	// Verifiers answer VERIFY (the effect of a non-idempotent call is
	// unknown), by the verify tool id the service names; Verify answers for
	// any verify tool without an entry. With neither, the run ends
	// StatusVerificationRequired.
	Verifiers map[string]Verifier
	Verify    Verifier
	// IdempotencyKey is sent with Decide, and to the tool through
	// AttemptFrom(ctx).IdempotencyKey: a tool that honours a key sends it
	// with every call, so the service may retry a call that may have run.
	IdempotencyKey string
}

// Verifier tells whether the failed call of req.ToolID had its effect: true
// (it happened: the run succeeds without calling the tool again), false (it
// did not: the tool may be called again). An error means it cannot tell:
// the run ends StatusVerificationRequired. ctx carries the verify tool's
// timeout.
type Verifier func(ctx context.Context, req VerifyRequest) (happened bool, err error)

// VerifyRequest is what a Verifier is asked.
type VerifyRequest struct {
	ToolID         string // the tool whose effect is unknown
	VerifyToolID   string // the read-only tool the manifest names
	Attempt        int    // the failed attempt
	Err            error  // what the failed attempt returned
	Reason         string // the service's reason
	Classification *recoveryv1.Classification
	IdempotencyKey string // the key the failed call was sent with
	TurnID         string
}

// Attempt is the call a ToolFunc is running (AttemptFrom).
type Attempt struct {
	ToolID string
	Number int // 1 for the first call of this tool in the run
	// IdempotencyKey is the key to send with the call: Call.IdempotencyKey,
	// or on a retry the key the service repeated; "" without one.
	IdempotencyKey string
}

type attemptKey struct{}

// AttemptFrom returns the attempt a ToolFunc's ctx belongs to (false
// outside a call made by Run).
func AttemptFrom(ctx context.Context) (Attempt, bool) {
	a, ok := ctx.Value(attemptKey{}).(Attempt)
	return a, ok
}

// Status is how Run ended.
type Status string

const (
	StatusSucceeded     Status = "succeeded"
	StatusFailFast      Status = "fail_fast"      // circuit open: the tool was not called (again)
	StatusEscalate      Status = "escalate"       // permanent error: a person or the model must act
	StatusGiveUp        Status = "give_up"        // attempts or time used up (also: local fallback exhausted)
	StatusPartial       Status = "partial"        // turn deadline reached
	StatusNoAlternative Status = "no_alternative" // the service named a tool Call.Tools lacks
	StatusCanceled      Status = "canceled"       // ctx ended first
	// StatusVerificationRequired: the effect of a non-idempotent call is
	// unknown (VERIFY) and no verifier could tell whether it happened; the
	// tool was not called again.
	StatusVerificationRequired Status = "verification_required"
)

// Decision is one answer that steered the run (or a local fallback step).
type Decision struct {
	ToolID  string
	Action  recoveryv1.Action
	DelayMs int64
	Reason  string
}

// Result is the typed end of a run. Run never panics and never returns an
// error: everything is in here.
type Result struct {
	Status Status
	Value  any    // with StatusSucceeded
	ToolID string // the tool that succeeded, or the one the run stopped on
	// Attempts counts tool invocations over the whole run.
	Attempts       int
	Reason         string
	Err            error // the last tool error, if any
	Classification *recoveryv1.Classification
	Cascade        []*recoveryv1.CascadeStep // dependents to skip, default or escalate
	Trace          []*recoveryv1.TraceEvent
	Decisions      []Decision
	PermitID       string // probe permit the successful call held
	// OutcomeRecorded is false when a success could not be reported.
	OutcomeRecorded bool
	// Fallback is set when the service could not be asked and the local
	// policy decided; FallbackReason says which call failed and why.
	Fallback       bool
	FallbackReason string
	// Verified is set with StatusSucceeded when a verifier said the failed
	// call's effect happened (Value is nil).
	Verified bool
	// VerifyToolID is the verify tool the service named (VERIFY).
	VerifyToolID string
	// IdempotencyKey is the key the last call was sent with.
	IdempotencyKey string
}

// errServiceUnusable marks a failed service RPC (unreachable, deadline,
// refused); the run continues on the local policy.
type errServiceUnusable struct {
	rpc string
	err error
}

func (e *errServiceUnusable) Error() string { return e.rpc + ": " + e.err.Error() }

type runner struct {
	c    *Client
	call Call
	res  Result
}

// Run performs call under the service's decisions. See the package comment.
func (c *Client) Run(ctx context.Context, call Call) Result {
	r := &runner{c: c, call: call}
	if c.tenantErr != nil {
		r.end(StatusGiveUp, call.ToolID, c.tenantErr.Error())
		return r.res
	}
	r.run(ctx)
	return r.res
}

func (r *runner) run(ctx context.Context) {
	tool := r.call.ToolID
	visited := map[string]bool{tool: true}
	key := r.call.IdempotencyKey
	resp, err := r.decide(ctx, tool, nil, 0, 0, "", "", key)
	if err != nil {
		r.fallback(ctx, tool, 0, 0, err)
		return
	}
	permit, timeout := resp.GetPermitId(), resp.GetTimeoutMs()
	switch resp.GetAction() {
	case recoveryv1.Action_ACTION_PROCEED:
	case recoveryv1.Action_ACTION_USE_ALTERNATIVE:
		if tool = resp.GetAlternativeToolId(); !r.switchTo(tool, visited) {
			return
		}
	default:
		r.stop(tool, resp)
		return
	}

	attempt, toolStart, clock := 0, time.Now(), retryClock{}
	for {
		fn := r.call.Tools[tool]
		if fn == nil {
			r.end(StatusNoAlternative, tool, "no callable for tool "+tool)
			return
		}
		attempt++
		outcomeID := newOutcomeID()
		attemptStart := time.Now()
		r.res.IdempotencyKey = key
		value, callErr := r.invoke(ctx, fn, Attempt{tool, attempt, key}, timeout)
		if callErr == nil {
			r.succeed(ctx, tool, value, attempt, time.Since(toolStart), outcomeID, permit)
			return
		}
		r.res.Err = callErr
		if ctx.Err() != nil {
			r.end(StatusCanceled, tool, ctx.Err().Error())
			return
		}
		var timedOut *errToolTimeout
		elapsed := clock.failed(attemptStart, errors.As(callErr, &timedOut))
		resp, err := r.decide(ctx, tool, toProto(callErr), attempt, elapsed, outcomeID, permit, key)
		if err != nil {
			r.fallback(ctx, tool, attempt, timeout, err)
			return
		}
		r.res.Classification = resp.GetClassification()
		permit, timeout = resp.GetPermitId(), resp.GetTimeoutMs()
		switch resp.GetAction() {
		case recoveryv1.Action_ACTION_RETRY:
			if k := resp.GetIdempotencyKey(); k != "" {
				key = k
			}
			if !sleep(ctx, retryWait(resp)) {
				r.end(StatusCanceled, tool, ctx.Err().Error())
				return
			}
		case recoveryv1.Action_ACTION_VERIFY:
			happened, ok := r.verify(ctx, tool, resp, attempt, key)
			if ctx.Err() != nil {
				r.end(StatusCanceled, tool, ctx.Err().Error())
				return
			}
			if !ok {
				r.verificationRequired(tool, resp)
				return
			}
			if happened {
				r.succeedVerified(ctx, tool, attempt, permit)
				return
			}
			// It did not happen: calling the tool again is safe, once
			// admission allows it (the breaker may have opened meanwhile).
			resp, err := r.decide(ctx, tool, nil, attempt, 0, "", "", key)
			if err != nil {
				r.fallback(ctx, tool, attempt, timeout, err)
				return
			}
			permit, timeout = resp.GetPermitId(), resp.GetTimeoutMs()
			switch resp.GetAction() {
			case recoveryv1.Action_ACTION_PROCEED:
			case recoveryv1.Action_ACTION_USE_ALTERNATIVE:
				if tool = resp.GetAlternativeToolId(); !r.switchTo(tool, visited) {
					return
				}
				attempt, toolStart, clock = 0, time.Now(), retryClock{}
			default:
				r.stop(tool, resp)
				return
			}
		case recoveryv1.Action_ACTION_USE_ALTERNATIVE:
			if tool = resp.GetAlternativeToolId(); !r.switchTo(tool, visited) {
				return
			}
			attempt, toolStart, clock = 0, time.Now(), retryClock{}
		default:
			r.stop(tool, resp)
			return
		}
	}
}

// switchTo refuses a tool the run already left: two tools failing over to
// each other would otherwise loop.
func (r *runner) switchTo(tool string, visited map[string]bool) bool {
	if visited[tool] {
		r.end(StatusGiveUp, tool, "alternative "+tool+" was already tried in this run")
		return false
	}
	visited[tool] = true
	return true
}

func (r *runner) stop(tool string, resp *recoveryv1.DecideResponse) {
	r.res.Cascade = resp.GetCascade()
	if resp.GetClassification() != nil {
		r.res.Classification = resp.GetClassification()
	}
	status := StatusGiveUp
	switch resp.GetAction() {
	case recoveryv1.Action_ACTION_FAIL_FAST:
		status = StatusFailFast
	case recoveryv1.Action_ACTION_ESCALATE:
		status = StatusEscalate
	case recoveryv1.Action_ACTION_PARTIAL:
		status = StatusPartial
	case recoveryv1.Action_ACTION_GIVE_UP:
	default:
		r.end(StatusGiveUp, tool, "unexpected action "+resp.GetAction().String())
		return
	}
	r.end(status, tool, resp.GetReason())
}

// verify asks the caller's verifier whether the failed call had its effect;
// ok is false when there is no verifier or it could not tell (the run then
// stops: never a blind retry).
func (r *runner) verify(ctx context.Context, tool string, resp *recoveryv1.DecideResponse,
	attempt int, key string) (happened, ok bool) {
	verifyTool := resp.GetVerifyToolId()
	r.res.VerifyToolID = verifyTool
	v := r.call.Verifiers[verifyTool]
	if v == nil {
		v = r.call.Verify
	}
	if v == nil {
		return false, false
	}
	req := VerifyRequest{ToolID: tool, VerifyToolID: verifyTool, Attempt: attempt, Err: r.res.Err,
		Reason: resp.GetReason(), Classification: resp.GetClassification(), IdempotencyKey: key,
		TurnID: r.call.TurnID}
	fn := func(vctx context.Context) (any, error) { return v(vctx, req) }
	value, err := r.call1(ctx, fn, Attempt{ToolID: verifyTool, Number: 1}, resp.GetTimeoutMs())
	if err != nil {
		return false, false
	}
	happened, _ = value.(bool)
	return happened, true
}

func (r *runner) verificationRequired(tool string, resp *recoveryv1.DecideResponse) {
	r.res.Cascade = resp.GetCascade()
	if resp.GetClassification() != nil {
		r.res.Classification = resp.GetClassification()
	}
	r.end(StatusVerificationRequired, tool, resp.GetReason())
}

// succeedVerified: the failed call did have its effect, a success of the
// tool, so the breaker and the trace count it as one.
func (r *runner) succeedVerified(ctx context.Context, tool string, attempt int, permit string) {
	r.res.Value, r.res.PermitID, r.res.Verified = nil, permit, true
	r.end(StatusSucceeded, tool, "verified by "+r.res.VerifyToolID+": the effect happened")
	req := &recoveryv1.RecordOutcomeRequest{
		ToolId: tool, Success: true, Attempt: int32(attempt), TurnId: r.call.TurnID,
		OutcomeId: newOutcomeID(), PermitId: permit, ExecutorId: r.c.opts.ExecutorID,
	}
	rctx, cancel := context.WithTimeout(ctx, r.c.opts.RPCTimeout)
	defer cancel()
	_, err := r.c.RPC.RecordOutcome(rctx, req)
	r.res.OutcomeRecorded = err == nil
}

func (r *runner) end(status Status, tool, reason string) {
	r.res.Status, r.res.ToolID, r.res.Reason = status, tool, reason
}

func (r *runner) succeed(ctx context.Context, tool string, value any, attempt int,
	latency time.Duration, outcomeID, permit string) {
	r.res.Value, r.res.PermitID, r.res.Err = value, permit, nil
	r.end(StatusSucceeded, tool, "")
	req := &recoveryv1.RecordOutcomeRequest{
		ToolId: tool, Success: true, LatencyMs: latency.Milliseconds(),
		Attempt: int32(attempt), TurnId: r.call.TurnID, OutcomeId: outcomeID,
		PermitId: permit, ExecutorId: r.c.opts.ExecutorID,
	}
	rctx, cancel := context.WithTimeout(ctx, r.c.opts.RPCTimeout)
	defer cancel()
	_, err := r.c.RPC.RecordOutcome(rctx, req)
	r.res.OutcomeRecorded = err == nil
}

func (r *runner) decide(ctx context.Context, tool string, toolErr *recoveryv1.ToolError,
	attempt int, elapsedMs int64, outcomeID, permit, key string) (*recoveryv1.DecideResponse, error) {
	req := &recoveryv1.DecideRequest{
		ToolId: tool, Error: toolErr, Attempt: int32(attempt), ElapsedMs: elapsedMs,
		TurnId: r.call.TurnID, Plan: r.call.Plan, ExecutorId: r.c.opts.ExecutorID,
		OutcomeId: outcomeID, PermitId: permit, IdempotencyKey: key,
	}
	if !r.call.TurnDeadline.IsZero() {
		req.TurnBudget = &recoveryv1.DecideRequest_TurnRemainingMs{
			TurnRemainingMs: time.Until(r.call.TurnDeadline).Milliseconds()}
	}
	rctx, cancel := context.WithTimeout(ctx, r.c.opts.RPCTimeout)
	defer cancel()
	resp, err := r.c.RPC.Decide(rctx, req)
	if err != nil {
		return nil, &errServiceUnusable{rpc: "Decide", err: err}
	}
	r.res.Trace = append(r.res.Trace, resp.GetTrace()...)
	r.res.Decisions = append(r.res.Decisions, Decision{
		ToolID: tool, Action: resp.GetAction(), DelayMs: resp.GetDelayMs(), Reason: resp.GetReason()})
	return resp, nil
}

// fallback finishes the run on the local policy after attemptsMade attempts
// of tool: every failure is retried until Fallback.MaxAttempts.
func (r *runner) fallback(ctx context.Context, tool string, attemptsMade int, timeoutMs int64, cause error) {
	p := r.c.opts.Fallback
	r.res.Fallback, r.res.FallbackReason = true, cause.Error()
	timeout := p.Timeout
	if timeoutMs > 0 {
		timeout = time.Duration(timeoutMs) * time.Millisecond
	}
	fn := r.call.Tools[tool]
	if fn == nil {
		r.end(StatusNoAlternative, tool, "no callable for tool "+tool)
		return
	}
	for attempt := attemptsMade; attempt < p.MaxAttempts; attempt++ {
		if attempt > 0 {
			delay := p.Delays[min(attempt-1, len(p.Delays)-1)]
			r.res.Decisions = append(r.res.Decisions, Decision{ToolID: tool,
				Action: recoveryv1.Action_ACTION_RETRY, DelayMs: delay.Milliseconds(), Reason: "local fallback"})
			if !sleep(ctx, delay) {
				r.end(StatusCanceled, tool, ctx.Err().Error())
				return
			}
		}
		r.res.IdempotencyKey = r.call.IdempotencyKey
		value, err := r.invoke(ctx, fn, Attempt{tool, attempt + 1, r.call.IdempotencyKey},
			timeout.Milliseconds())
		if err == nil {
			r.res.Value, r.res.Err = value, nil
			r.end(StatusSucceeded, tool, "local fallback")
			return
		}
		r.res.Err = err
		if ctx.Err() != nil {
			r.end(StatusCanceled, tool, ctx.Err().Error())
			return
		}
	}
	r.end(StatusGiveUp, tool, fmt.Sprintf("local fallback: %d attempts failed", p.MaxAttempts))
}

// retryClock measures the retry time DecideRequest.elapsed_ms carries: wall
// time since the first attempt failed, without the attempts that ran into
// their timeout (the service bounds those by the tool timeout and the turn
// deadline, so counting them would spend the retry budget on one timeout).
type retryClock struct {
	firstFailed time.Time
	timedOut    time.Duration
}

func (c *retryClock) failed(attemptStart time.Time, timedOut bool) int64 {
	now := time.Now()
	if c.firstFailed.IsZero() {
		c.firstFailed = now
		return 0
	}
	if timedOut {
		c.timedOut += now.Sub(attemptStart)
	}
	if ms := (now.Sub(c.firstFailed) - c.timedOut).Milliseconds(); ms > 0 {
		return ms
	}
	return 0
}

// errToolTimeout is what a call that overran its hard timeout fails with.
type errToolTimeout struct {
	tool      string
	timeoutMs int64
}

func (e *errToolTimeout) Error() string {
	return fmt.Sprintf("tool %s timed out after %d ms", e.tool, e.timeoutMs)
}

// invoke makes one attempt of a tool: it counts, and AttemptFrom(ctx) in
// fn returns a.
func (r *runner) invoke(ctx context.Context, fn ToolFunc, a Attempt, timeoutMs int64) (any, error) {
	r.res.Attempts++
	return r.call1(ctx, fn, a, timeoutMs)
}

// call1 calls fn under a hard timeout. A tool that ignores its context is
// abandoned (its goroutine finishes on its own) so the run never hangs; a
// panicking tool becomes an internal error.
func (r *runner) call1(ctx context.Context, fn ToolFunc, a Attempt, timeoutMs int64) (any, error) {
	if timeoutMs <= 0 {
		timeoutMs = r.c.opts.Fallback.Timeout.Milliseconds()
	}
	tool := a.ToolID
	cctx, cancel := context.WithTimeout(context.WithValue(ctx, attemptKey{}, a),
		time.Duration(timeoutMs)*time.Millisecond)
	defer cancel()
	type outcome struct {
		value any
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: &ToolError{Message: fmt.Sprintf("tool panicked: %v", p),
					Kind: recoveryv1.ErrorKind_ERROR_KIND_INTERNAL_ERROR, ExceptionType: "panic"}}
			}
		}()
		v, err := fn(cctx)
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		if o.err != nil && errors.Is(o.err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, &errToolTimeout{tool, timeoutMs}
		}
		return o.value, o.err
	case <-cctx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &errToolTimeout{tool, timeoutMs}
	}
}

// toProto turns a tool's error into the wire form.
func toProto(err error) *recoveryv1.ToolError {
	out := toolError(err)
	out.Message = cutMessage(out.Message)
	return out
}

// MessageSendMax is the most of an error message sent: its head and tail
// (a traceback's cause is its last line) with a marker for the middle. The
// service reads 8 KiB of each end and accepts up to its receive limit.
const MessageSendMax = 32 * 1024

// cutMessage keeps a long message's head and tail, on UTF-8 boundaries.
func cutMessage(m string) string {
	if len(m) <= MessageSendMax {
		return m
	}
	room := MessageSendMax - 48
	h, t := room/2, len(m)-(room-room/2)
	for h > 0 && !utf8.RuneStart(m[h]) {
		h--
	}
	for t < len(m) && !utf8.RuneStart(m[t]) {
		t++
	}
	return fmt.Sprintf("%s\n[... %d bytes cut ...]\n%s", m[:h], t-h, m[t:])
}

func toolError(err error) *recoveryv1.ToolError {
	var te *ToolError
	if errors.As(err, &te) {
		return &recoveryv1.ToolError{
			Message: te.Message, HttpStatus: te.HTTPStatus, GrpcCode: te.GRPCCode, Code: te.Code,
			ExceptionType: te.ExceptionType, Kind: te.Kind, Source: te.Source,
			RetryAfterMs: te.RetryAfter.Milliseconds(),
		}
	}
	var to *errToolTimeout
	if errors.As(err, &to) {
		return &recoveryv1.ToolError{Message: to.Error(), Kind: recoveryv1.ErrorKind_ERROR_KIND_TIMEOUT,
			ExceptionType: "context.DeadlineExceeded"}
	}
	return &recoveryv1.ToolError{Message: err.Error(), ExceptionType: fmt.Sprintf("%T", err)}
}

// retryWait is the wait a RETRY asks for: delay_us, the delay to the
// microsecond, or delay_ms from a server that predates delay_us (it sends 0).
func retryWait(resp *recoveryv1.DecideResponse) time.Duration {
	if us := resp.GetDelayUs(); us > 0 {
		return scaled(us, time.Microsecond)
	}
	return scaled(resp.GetDelayMs(), time.Millisecond)
}

// scaled is n units, saturating, so an absurd delay sleeps long instead of
// wrapping negative.
func scaled(n int64, unit time.Duration) time.Duration {
	if n > int64(math.MaxInt64/unit) {
		return math.MaxInt64
	}
	return time.Duration(n) * unit
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func newOutcomeID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
