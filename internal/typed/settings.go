package typed

import (
	"slices"

	"github.com/ahp-gateway/ahp/internal/policy"
)

// Defaults for policy.Settings fields left at their zero value, as documented on the fields.
// (policy.Settings.WithDefaults holds the same values for the policy engine; this package keeps
// its own copy so that it depends on nothing but the types.)
const (
	defaultMinIdleMs     = 5000
	defaultMinConfidence = 0.3
	defaultMaxFacts      = 10
	defaultMaxRecall     = 20
	defaultMultiplier    = 2.0
	defaultMinBackoffMs  = 100
	defaultMaxBackoffMs  = 60000
)

// withDefaults returns s with every zero field set to its default. A list given in s replaces the
// default list; an explicitly empty broad_paths means "no location path is broad". The result
// shares no slice with package state or with s where this package might append.
func withDefaults(s policy.Settings) policy.Settings {
	if s.Idle.MinIdleMs == 0 {
		s.Idle.MinIdleMs = defaultMinIdleMs
	}
	s.Intent = intentDefaults(s.Intent)
	if s.Context.MaxFacts <= 0 {
		s.Context.MaxFacts = defaultMaxFacts
	}
	if s.Context.BroadPaths == nil {
		s.Context.BroadPaths = []string{".", "/", "*", "**"}
	}
	if s.Memory.MaxResults <= 0 {
		s.Memory.MaxResults = defaultMaxRecall
	}
	if len(s.Planning.Preferred) == 0 {
		s.Planning.Preferred = []string{"step_by_step"}
	}
	s.RateLimit = rateLimitDefaults(s.RateLimit)
	s.Reasoning.Hints = slices.Clone(s.Reasoning.Hints)
	return s
}

// intentDefaults fills the zero fields of intent settings.
func intentDefaults(s policy.IntentSettings) policy.IntentSettings {
	if s.MinConfidence <= 0 {
		s.MinConfidence = defaultMinConfidence
	}
	return s
}

// rateLimitDefaults fills the zero fields of rate limit settings and keeps min <= max.
func rateLimitDefaults(s policy.RateLimitSettings) policy.RateLimitSettings {
	if s.Multiplier <= 0 {
		s.Multiplier = defaultMultiplier
	}
	if s.MaxBackoffMs == 0 {
		s.MaxBackoffMs = defaultMaxBackoffMs
	}
	if s.MinBackoffMs == 0 {
		s.MinBackoffMs = defaultMinBackoffMs
	}
	s.MinBackoffMs = min(s.MinBackoffMs, s.MaxBackoffMs)
	return s
}
