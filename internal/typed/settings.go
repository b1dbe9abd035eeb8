package typed

import (
	"slices"

	"github.com/ahp-gateway/ahp/internal/policy"
)

// withDefaults returns s with every zero field set to its default (policy.Settings.WithDefaults).
// Decide also serves settings built in code, not only parsed ones, so values a parsed policy
// would reject count as unset (a negative number) or are clamped (a minimum backoff above the
// maximum). A list given in s replaces the default list; an explicitly empty broad_paths means "no
// location path is broad". The result shares no slice with package state or with s where this
// package might append.
func withDefaults(s policy.Settings) policy.Settings {
	s.Intent = intentDefaults(s.Intent)
	s.RateLimit = rateLimitDefaults(s.RateLimit)
	s.Context.MaxFacts = max(s.Context.MaxFacts, 0)
	s.Memory.MaxResults = max(s.Memory.MaxResults, 0)
	s = s.WithDefaults()
	s.Reasoning.Hints = slices.Clone(s.Reasoning.Hints)
	return s
}

// intentDefaults fills the zero fields of intent settings; a negative MinConfidence counts as
// unset.
func intentDefaults(s policy.IntentSettings) policy.IntentSettings {
	s.MinConfidence = max(s.MinConfidence, 0)
	return s.WithDefaults()
}

// rateLimitDefaults fills the zero fields of rate limit settings (a negative Multiplier counts as
// unset) and keeps min <= max.
func rateLimitDefaults(s policy.RateLimitSettings) policy.RateLimitSettings {
	s.Multiplier = max(s.Multiplier, 0)
	s = s.WithDefaults()
	s.MinBackoffMs = min(s.MinBackoffMs, s.MaxBackoffMs)
	return s
}
