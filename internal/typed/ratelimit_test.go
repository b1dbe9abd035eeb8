package typed_test

import (
	"math"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// rateLimits is a session view with earlier rate limits at the given ages.
func rateLimits(ages ...time.Duration) *policy.SessionView {
	v := &policy.SessionView{}
	for _, a := range ages {
		v.Recent = append(v.Recent, policy.EventSummary{Type: "rate_limit", Time: now.Add(-a)})
	}
	return v
}

func TestRateLimitBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		retry uint64
		view  *policy.SessionView
		s     policy.RateLimitSettings
		want  uint64
	}{
		{name: "reference example", retry: 1500, want: 3000},
		{name: "one earlier limit doubles", retry: 1500, view: rateLimits(10 * time.Second), want: 6000},
		{name: "two earlier limits", retry: 1500, view: rateLimits(10*time.Second, 20*time.Second), want: 12000},
		{name: "limits older than a minute do not count", retry: 1500, view: rateLimits(61*time.Second, time.Hour), want: 3000},
		{name: "other events do not count", retry: 1500,
			view: &policy.SessionView{Recent: []policy.EventSummary{{Type: "tool.before", Time: now}}}, want: 3000},
		{name: "the exponent stops at five", retry: 100,
			view: rateLimits(1, 2, 3, 4, 5, 6, 7, 8), want: 100 * 2 * 32},
		{name: "capped at the maximum", retry: 40000, want: 60000},
		{name: "at least the minimum", retry: 0, want: 100},
		{name: "custom multiplier and bounds", retry: 1000,
			s: policy.RateLimitSettings{Multiplier: 1.5, MinBackoffMs: 2000, MaxBackoffMs: 10000}, want: 2000},
		{name: "minimum above maximum is clamped", retry: 1,
			s: policy.RateLimitSettings{MinBackoffMs: 5000, MaxBackoffMs: 1000}, want: 1000},
		{name: "huge values do not overflow", retry: math.MaxUint64, want: 60000},
		{name: "huge maximum", retry: math.MaxUint64 / 2,
			s: policy.RateLimitSettings{MaxBackoffMs: math.MaxUint64}, want: math.MaxUint64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := decide(t, rateLimitEvent(tt.retry), policy.Result{}, tt.view, policy.Settings{RateLimit: tt.s})
			r := d.GetRateLimit().GetRetry()
			if r == nil {
				t.Fatalf("no retry: %s", js(d))
			}
			equal(t, r.GetRetryAfterMs(), tt.want, "retry_after_ms")
			equal(t, r.GetMetadata() == nil, true, "built-in retry has no metadata")
			equal(t, typed.Backoff(tt.retry, typed.RecentRateLimits(tt.view, now), tt.s), tt.want, "Backoff")
		})
	}
}

func TestRecentRateLimits(t *testing.T) {
	t.Parallel()
	v := rateLimits(time.Second, 59*time.Second, 2*time.Minute)
	v.Recent = append(v.Recent, policy.EventSummary{Type: "rate_limit"}, policy.EventSummary{Type: "rate_limit", Time: now.Add(time.Second)})
	equal(t, typed.RecentRateLimits(v, now), 3, "within the window (future counts, zero time does not)")
	equal(t, typed.RecentRateLimits(v, time.Time{}), 4, "without a clock")
	equal(t, typed.RecentRateLimits(nil, now), 0, "nil view")
}

func TestRateLimitRuleAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer policy.TypedAnswer
		arm    string
		retry  uint64
		reason string
	}{
		{name: "queue", answer: policy.TypedAnswer{Action: "queue"}, arm: "rate_limit.queue"},
		{name: "skip with reason", answer: policy.TypedAnswer{Action: "skip", Reason: "budget spent"}, arm: "rate_limit.skip", reason: "budget spent"},
		{name: "skip without reason", answer: policy.TypedAnswer{Action: "skip"}, arm: "rate_limit.skip", reason: "skipped by rule r"},
		{name: "retry with a fixed delay", answer: policy.TypedAnswer{Action: "retry", RetryAfterMs: 250}, arm: "rate_limit.retry", retry: 250},
		{name: "retry with the backoff", answer: policy.TypedAnswer{Action: "retry"}, arm: "rate_limit.retry", retry: 3000},
		{name: "max backoff from the rule", answer: policy.TypedAnswer{MaxBackoffMs: 2000}, arm: "rate_limit.retry", retry: 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.answer.RuleID = "r"
			d := decide(t, rateLimitEvent(1500), typedResult(tt.answer), nil, policy.Settings{})
			equal(t, arm(d), tt.arm, "arm")
			equal(t, d.GetRateLimit().GetRetry().GetRetryAfterMs(), tt.retry, "retry_after_ms")
			equal(t, d.GetRateLimit().GetSkip().GetReason(), tt.reason, "reason")
			if r := d.GetRateLimit().GetRetry(); r != nil {
				equal(t, metaString(d, typed.RuleIDKey), "r", "rule id")
			}
		})
	}
	t.Run("verdicts", func(t *testing.T) {
		t.Parallel()
		d := decide(t, rateLimitEvent(1), typedResult(policy.TypedAnswer{RuleID: "r", Action: "queue"}), nil, policy.Settings{})
		equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_DEFER, "queue verdict")
	})
}
