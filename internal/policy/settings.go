package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Defaults of the typed-decision settings, as documented on each Settings field.
const (
	defaultIdleMinMs             = 5000
	defaultIntentMinConfidence   = 0.3
	defaultContextMaxFacts       = 10
	defaultMemoryMaxResults      = 20
	defaultRateLimitMultiplier   = 2
	defaultRateLimitMaxBackoffMs = 60000
	defaultRateLimitMinBackoffMs = 100
	defaultPlanningStrategy      = "step_by_step"
	defaultCELCostLimit          = 10_000_000
	confirmationApprove          = "approve"
	confirmationReject           = "reject"
	confirmationEscalate         = "escalate"
)

// defaultBroadPaths are the context_perception location paths considered too broad.
var defaultBroadPaths = []string{".", "/", "*", "**"}

// WithDefaults returns s with every zero field set to its documented default. Slices and maps
// that are filled in are fresh; the others are shared with s.
func (s Settings) WithDefaults() Settings {
	orDefault(&s.Idle.MinIdleMs, defaultIdleMinMs)
	s.Intent = s.Intent.WithDefaults()
	orDefault(&s.Context.MaxFacts, defaultContextMaxFacts)
	if s.Context.BroadPaths == nil {
		s.Context.BroadPaths = slices.Clone(defaultBroadPaths)
	}
	orDefault(&s.Memory.MaxResults, defaultMemoryMaxResults)
	if len(s.Planning.Preferred) == 0 {
		s.Planning.Preferred = []string{defaultPlanningStrategy}
	}
	s.RateLimit = s.RateLimit.WithDefaults()
	orDefault(&s.CEL.CostLimit, defaultCELCostLimit)
	return s
}

// WithDefaults returns s with every zero field set to its documented default.
func (s IntentSettings) WithDefaults() IntentSettings {
	orDefault(&s.MinConfidence, defaultIntentMinConfidence)
	return s
}

// WithDefaults returns s with every zero field set to its documented default.
func (s RateLimitSettings) WithDefaults() RateLimitSettings {
	orDefault(&s.Multiplier, defaultRateLimitMultiplier)
	orDefault(&s.MaxBackoffMs, defaultRateLimitMaxBackoffMs)
	orDefault(&s.MinBackoffMs, defaultRateLimitMinBackoffMs)
	return s
}

// orDefault sets *v to def when *v is the zero value.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// validate rejects settings the typed deciders could not honour.
func (s Settings) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c := s.Intent.MinConfidence; c < 0 || c > 1 {
		bad("intent.min_confidence must be within [0, 1], got %v", c)
	}
	for intent, words := range s.Intent.Keywords {
		if intent == "" || len(words) == 0 {
			bad("intent.keywords: %q needs a non-empty name and at least one keyword", intent)
		}
	}
	if s.Context.MaxFacts < 0 {
		bad("context.max_facts must not be negative")
	}
	if s.Memory.MaxResults < 0 {
		bad("memory.max_results must not be negative")
	}
	if slices.Contains(s.Planning.Preferred, "") {
		bad("planning.preferred: strategy names must not be empty")
	}
	if m := s.RateLimit.Multiplier; m != 0 && m < 1 {
		bad("rate_limit.multiplier must be at least 1, got %v", m)
	}
	d := s.WithDefaults().RateLimit
	if d.MinBackoffMs > d.MaxBackoffMs {
		bad("rate_limit.min_backoff_ms (%d) exceeds max_backoff_ms (%d)", d.MinBackoffMs, d.MaxBackoffMs)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Confirmation.Default)) {
		switch answer := s.Confirmation.Default[name]; answer {
		case confirmationApprove, confirmationReject, confirmationEscalate:
		default:
			bad("confirmation.default.%s: want approve, reject or escalate, got %q", name, answer)
		}
	}
	return errors.Join(errs...)
}
