package typed

import (
	"math"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// rateLimitKind answers rate_limit: retry{retry_after_ms, metadata?}, queue (unit) or
// skip{reason}. Its refusal is skip; a policy defer is a retry.
var rateLimitKind = &kind{
	name:   "rate_limit",
	refuse: setSkip,
	later: func(d *ahpv1.Decision, in *input, g generic) {
		ms := g.retryAfterMs
		if ms == 0 {
			ms = builtinBackoff(in, in.s.RateLimit)
		}
		setRetry(d, ms)
	},
	decide: decideRateLimit,
}

// RateLimitWindow is how far back earlier rate limits of the session raise the backoff.
const RateLimitWindow = time.Minute

// maxDoublings caps the exponent of the backoff, so a long storm of limits does not jump
// straight to the maximum after a handful of events.
const maxDoublings = 5

// decideRateLimit (a rule's skip is applied by Decide): a rule's queue wins; a rule's retry waits
// its RetryAfterMs exactly, or the built-in backoff capped by its MaxBackoffMs. Built in, the
// agent retries after Backoff.
//
// The retry carries no metadata: the attempt count is server memory the agent already has in its
// own form, and a bare retry matches the reference wire form ({"decision":"retry",
// "retry_after_ms":3000}).
func decideRateLimit(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace {
	settings := in.s.RateLimit
	switch action(ta) {
	case "queue":
		d.Typed = &ahpv1.Decision_RateLimit{RateLimit: &ahpv1.RateLimitDecision{
			Decision: &ahpv1.RateLimitDecision_Queue_{Queue: &ahpv1.RateLimitDecision_Queue{}},
		}}
		return trace{ruleID: ta.RuleID}
	case "retry":
		if ta.RetryAfterMs > 0 {
			setRetry(d, ta.RetryAfterMs)
			return trace{ruleID: ta.RuleID}
		}
	}
	var tr trace
	if ta != nil && ta.MaxBackoffMs > 0 {
		settings.MaxBackoffMs = ta.MaxBackoffMs
		settings.MinBackoffMs = min(settings.MinBackoffMs, settings.MaxBackoffMs)
		tr.ruleID = ta.RuleID
	}
	if action(ta) == "retry" {
		tr.ruleID = ta.RuleID
	}
	setRetry(d, builtinBackoff(in, settings))
	return tr
}

// builtinBackoff applies Backoff to the event and the session's recent rate limits.
func builtinBackoff(in *input, s policy.RateLimitSettings) uint64 {
	return Backoff(in.ev.GetRateLimit().GetRetryAfterMs(), RecentRateLimits(in.view, in.now), s)
}

// Backoff is the built-in retry delay in milliseconds:
//
//	clamp(retryAfterMs × Multiplier × 2^min(recent, 5), MinBackoffMs, MaxBackoffMs)
//
// where recent is the number of earlier rate limits in the session (RecentRateLimits). Zero
// settings take their defaults (multiplier 2, 100 ms, 60000 ms), so a first limit of 1500 ms waits
// 3000 ms and a third one within a minute 12000 ms.
func Backoff(retryAfterMs uint64, recent int, s policy.RateLimitSettings) uint64 {
	s = rateLimitDefaults(s)
	n := min(max(recent, 0), maxDoublings)
	delay := float64(retryAfterMs) * s.Multiplier * math.Exp2(float64(n))
	switch {
	case delay >= float64(s.MaxBackoffMs):
		return s.MaxBackoffMs
	case delay <= float64(s.MinBackoffMs):
		return s.MinBackoffMs
	}
	return uint64(math.Round(delay))
}

// RecentRateLimits counts the session's remembered rate_limit events within RateLimitWindow
// before now. Events stamped after now (clock skew) count; with a zero now every remembered one
// does.
func RecentRateLimits(v *policy.SessionView, now time.Time) int {
	if v == nil {
		return 0
	}
	n := 0
	for _, e := range v.Recent {
		if e.Type == "rate_limit" && !e.Time.IsZero() && (now.IsZero() || e.Time.After(now.Add(-RateLimitWindow))) {
			n++
		}
	}
	return n
}

func setRetry(d *ahpv1.Decision, ms uint64) {
	d.Typed = &ahpv1.Decision_RateLimit{RateLimit: &ahpv1.RateLimitDecision{
		Decision: &ahpv1.RateLimitDecision_Retry_{Retry: &ahpv1.RateLimitDecision_Retry{RetryAfterMs: ms}},
	}}
}

func setSkip(d *ahpv1.Decision, reason string) {
	d.Typed = &ahpv1.Decision_RateLimit{RateLimit: &ahpv1.RateLimitDecision{
		Decision: &ahpv1.RateLimitDecision_Skip_{Skip: &ahpv1.RateLimitDecision_Skip{Reason: reason}},
	}}
}
