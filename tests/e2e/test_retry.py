"""003 section 2: retry policy, played by an executor that sleeps the
delays recoveryd returns and measures them.

The executor sleeps delay_us, the returned delay to the microsecond (whole
milliseconds would leave a 100 ms +-10 % delay only 21 values, and 10 such
draws are 80 % unique only three times in four). It starts its backoff
timer when an attempt fails (the Decide
round trip counts towards the wait), so attempt start to next attempt start
is the returned delay plus the operating system's sleep overshoot. The
delays the server returns are checked exactly against the policy; measured
delays get SLEEP_ALLOWANCE_MS on the upper bound for that overshoot. The
executor also checks its own precision: a run in which it woke up more than
SLEEP_ALLOWANCE_MS late (a loaded machine descheduled it) measured the
operating system, not recoveryd, so it is set aside and run again. To be
late rarely, the executor sleeps until SPIN_MS before the deadline and
spins the rest (a VM's timer overshoots by a millisecond or more when its
host is busy). When too few runs are precise even so, the test still
checks everything the server returned, then skips the measured part with
the reason: the machine cannot measure it.

The breaker is set out of the way here (failure_threshold 1000) so that the
retry policy is seen on its own; sections 3 and 7 test how the two interact
with the default threshold of 5."""
import statistics
import time

import pytest

from rdtest import decide, expect_action, network_timeout, pb, unique

SLEEP_ALLOWANCE_MS = 1.0
SPIN_MS = 2.0

CUSTOM_API = {
    "id": "custom_api",
    "retry_policy": {"initial_delay_ms": 50, "max_delay_ms": 2000, "max_attempts": 3},
}

QUIET_BREAKER = {"circuit_breaker": {"failure_threshold": 1000}}


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start(defaults=QUIET_BREAKER, tools=[CUSTOM_API]).stub


def sleep_until(deadline: float):
    remaining = deadline - time.perf_counter() - SPIN_MS / 1000.0
    if remaining > 0:
        time.sleep(remaining)
    while time.perf_counter() < deadline:
        pass


def skip_unmeasurable(why: str):
    pytest.skip(f"unmeasurable: {why}: the machine is too loaded to measure delays "
                "(every delay the server returned was checked)")


class Call:
    """What one played tool call saw: attempt start times (perf_counter
    seconds), the decisions, and how late the executor woke up at worst."""

    def __init__(self):
        self.starts, self.decisions, self.worst_lateness_ms = [], [], 0.0

    @property
    def disturbed(self) -> bool:
        return self.worst_lateness_ms > SLEEP_ALLOWANCE_MS


def wait_s(resp) -> float:
    """The wait a RETRY asks for, to the microsecond (delay_us) as an
    executor that can sleep that precisely uses it."""
    assert abs(resp.delay_us / 1000.0 - resp.delay_ms) <= 0.5, \
        f"delay_us {resp.delay_us} is not delay_ms {resp.delay_ms} to the microsecond"
    return resp.delay_us / 1e6


def play_call(stub, tool_id, make_error=network_timeout, max_attempts=50) -> Call:
    """One tool call whose every attempt fails at once."""
    call = Call()
    first_start = time.perf_counter()
    wake_at = None
    for attempt in range(1, max_attempts + 1):
        start = time.perf_counter()
        if wake_at is not None:
            call.worst_lateness_ms = max(call.worst_lateness_ms, (start - wake_at) * 1000)
        call.starts.append(start)
        failed_at = time.perf_counter()  # the attempt fails immediately
        resp = decide(stub, tool_id, make_error(), attempt=attempt,
                      elapsed_ms=int((failed_at - first_start) * 1000))
        call.decisions.append(resp)
        if resp.action != pb.ACTION_RETRY:
            break
        wake_at = failed_at + wait_s(resp)
        sleep_until(wake_at)
    return call


def undisturbed_calls(stub, make_tool_id, wanted, max_runs):
    """Plays calls until `wanted` of them ran with a precise executor, or
    max_runs were played; every call (disturbed or not) is returned for
    the server-side checks."""
    calls = []
    while sum(not c.disturbed for c in calls) < wanted and len(calls) < max_runs:
        calls.append(play_call(stub, make_tool_id()))
    return calls


def gaps_ms(starts):
    return [(b - a) * 1000.0 for a, b in zip(starts, starts[1:])]


def within(value, nominal, tolerance, allowance=0.0):
    return nominal - tolerance <= value <= nominal + tolerance + allowance


def test_2_1_exponential_backoff_delays(stub):
    """2.1: default policy, transient error. Delays 100±10, 200±20, 400±40,
    800±80 ms measured attempt start to attempt start; total 1500±150 ms
    (P95 across 20 runs); all 5 attempts executed, then no retry."""
    nominal = [100, 200, 400, 800]
    runs = 20
    calls = undisturbed_calls(stub, lambda: unique("flight_search"), runs, max_runs=40)
    for call in calls:
        assert len(call.starts) == 5, (
            f"expected 5 attempts, got {len(call.starts)}: "
            f"{[pb.Action.Name(d.action) for d in call.decisions]}")
        for d in call.decisions[:4]:
            expect_action(d, pb.ACTION_RETRY)
        expect_action(call.decisions[4], pb.ACTION_GIVE_UP)
    returned = [[d.delay_ms for d in c.decisions[:4]] for c in calls]
    measured = [gaps_ms(c.starts) for c in calls if not c.disturbed]

    # What the server returns is the policy itself: exact bounds, every run.
    for delays in returned:
        for got, base in zip(delays, nominal):
            assert within(got, base, base * 0.1), f"returned delays {delays}"
    # A retry never comes early.
    for call in calls:
        for gap, d in zip(gaps_ms(call.starts), call.decisions):
            assert gap >= d.delay_ms - 0.5, f"slept {gap:.1f} ms for a {d.delay_ms} ms delay"
    if len(measured) < runs:
        skip_unmeasurable(f"only {len(measured)} of {len(calls)} runs had the executor wake "
                          f"within {SLEEP_ALLOWANCE_MS} ms of the delay")

    print(f"\n2.1 measured delays (ms), one run per line ({len(calls) - runs} disturbed "
          "runs set aside):")
    for gaps in measured:
        print("  " + ", ".join(f"{g:7.1f}" for g in gaps) + f"  total {sum(gaps):7.1f}")

    needed = -(-runs * 95 // 100)  # P95: at least 19 of 20 runs
    for i, base in enumerate(nominal):
        ok = sum(within(g[i], base, base * 0.1, SLEEP_ALLOWANCE_MS) for g in measured)
        assert ok >= needed, (f"delay {i + 1} ({base} ms): only {ok}/{runs} runs within "
                              f"±{base // 10} ms: {[round(g[i], 1) for g in measured]}")
    totals = [sum(g) for g in measured]
    ok = sum(within(t, 1500, 150, SLEEP_ALLOWANCE_MS) for t in totals)
    assert ok >= needed, f"totals within 1500±150 ms: {ok}/{runs}: {totals}"


def test_2_2_jitter_applied(launcher):
    """2.2: retry delay 100 ms with ±10 % jitter, 10 retries measured.
    100 % of delays within [90, 110] ms, at least 80 % unique values, mean
    100±5 ms. Values count as unique to 0.1 ms. The range holds in every
    trial; uniqueness and the mean are statistical (a trial misses them about
    once in 150), so a trial may be repeated (up to 3) for them."""
    flat = {"id": "flight_search",
            "retry_policy": {"initial_delay_ms": 100, "max_delay_ms": 100,
                             "multiplier": 1.0, "jitter_percent": 10,
                             "max_attempts": 11, "max_total_time_ms": 600000}}
    stub = launcher.start(defaults=QUIET_BREAKER, tools=[flat]).stub
    trials = []
    for _ in range(8):
        call = play_call(stub, "flight_search")
        assert len(call.starts) == 11, \
            f"expected 11 attempts (10 retries), got {len(call.starts)}"
        expect_action(call.decisions[-1], pb.ACTION_GIVE_UP)
        returned = [d.delay_us / 1000.0 for d in call.decisions[:10]]
        assert all(90 <= d <= 110 for d in returned), f"returned delays {returned}"
        if call.disturbed:
            continue  # the executor overslept: this trial measured the OS
        measured = gaps_ms(call.starts)
        assert all(90 <= m <= 110 + SLEEP_ALLOWANCE_MS for m in measured), \
            f"measured delays {measured}"
        unique_share = len({round(m, 1) for m in measured}) / len(measured)
        mean = statistics.mean(measured)
        trials.append((unique_share, mean, returned, measured))
        if (unique_share >= 0.8 and abs(mean - 100) <= 5) or len(trials) == 3:
            break
        # the statistical criteria missed by chance (or not): another trial
    if not trials:
        skip_unmeasurable("the executor overslept in every trial")
    unique_share, mean, returned, measured = trials[-1]
    print(f"\n2.2 measured delays (ms): {[round(m, 1) for m in measured]}; "
          f"unique {unique_share:.0%}, mean {mean:.1f}")
    assert unique_share >= 0.8, f"unique share per trial: {[t[0] for t in trials]}"
    assert abs(mean - 100) <= 5, f"mean per trial: {[t[1] for t in trials]}"
    assert len(set(returned)) > 1, f"no jitter at all: {returned}"


def test_2_3_max_attempts_respected(stub):
    """2.3: max attempts 5, every attempt fails transiently. After attempt 5
    retrying stops and the error goes back to the caller; attempt 6 is never
    made (and would not be retried if an executor reported it anyway)."""
    tool = unique("flight_search")
    elapsed = 0
    for attempt in range(1, 5):
        resp = decide(stub, tool, network_timeout(), attempt=attempt, elapsed_ms=elapsed)
        expect_action(resp, pb.ACTION_RETRY)
        elapsed += resp.delay_ms
    resp = decide(stub, tool, network_timeout(), attempt=5, elapsed_ms=elapsed)
    expect_action(resp, pb.ACTION_GIVE_UP)
    assert resp.delay_ms == 0
    stray = decide(stub, tool, network_timeout(), attempt=6, elapsed_ms=elapsed)
    assert stray.action != pb.ACTION_RETRY, pb.Action.Name(stray.action)


def test_2_4_max_total_time_respected(stub):
    """2.4: max total retry time 2000 ms, each attempt takes 600 ms: after
    attempts at 0, 600, 1200 and 1800 ms the next one would exceed 2000 ms,
    so attempt 5 is not executed; stop after attempt 4 (total ~1800 ms)."""
    tool = unique("flight_search")
    for attempt, elapsed in [(1, 0), (2, 600), (3, 1200)]:
        resp = decide(stub, tool, network_timeout(), attempt=attempt, elapsed_ms=elapsed)
        expect_action(resp, pb.ACTION_RETRY)
        assert elapsed + resp.delay_ms < 2000
    resp = decide(stub, tool, network_timeout(), attempt=4, elapsed_ms=1800)
    expect_action(resp, pb.ACTION_GIVE_UP)
    # Attempt 4 is below max_attempts (5): time, not attempts, stopped it.
    assert resp.delay_ms == 0


def test_2_5_tool_specific_overrides(stub):
    """2.5: custom_api's manifest sets initial_delay_ms 50, max_delay_ms 2000,
    max_attempts 3: delays 50 ms then 100 ms (not the default 100, 200),
    and no retry after attempt 3."""
    for _ in range(5):
        call = play_call(stub, "custom_api")
        assert len(call.starts) == 3, f"expected 3 attempts, got {len(call.starts)}"
        returned = [d.delay_ms for d in call.decisions[:2]]
        assert within(returned[0], 50, 5) and within(returned[1], 100, 10), returned
        expect_action(call.decisions[2], pb.ACTION_GIVE_UP)
        if not call.disturbed:
            break
    default_tool = decide(stub, unique("flight_search"), network_timeout(), attempt=1)
    assert within(default_tool.delay_ms, 100, 10), "the defaults are untouched"
    if call.disturbed:
        skip_unmeasurable("the executor overslept in every run")
    measured = gaps_ms(call.starts)
    assert within(measured[0], 50, 5, SLEEP_ALLOWANCE_MS), measured
    assert within(measured[1], 100, 10, SLEEP_ALLOWANCE_MS), measured
