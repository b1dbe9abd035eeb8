package typed_test

import (
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

func TestClassifyIntents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prompt, intent string
	}{
		{"where is the auth function?", "locate"},
		{"can you please find AhpServer", "locate"},
		{"Which file defines the router?", "locate"},
		{"why does the build fail?", "understand"},
		{"Explain the retry logic", "understand"},
		{"compare the old parser with the new one", "compare"},
		{"Postgres vs SQLite for this workload", "compare"},
		{"run the tests for `parseConfig`", "validate"},
		{"verify that the migration is reversible", "validate"},
		{"show me src/server.rs", "retrieve"},
		{"give me the list of open issues", "retrieve"},
		{"explore the repository layout", "explore"},
		{"should we use postgres or sqlite?", "reason"},
		{"what is the status of the build", "track"},
		{"check the history of main.go", "track"},
		{"is this a bug or a feature", "recognize"},
		{"identify the language of this snippet", "recognize"},
		{"hello there", "understand"},
		{"", "understand"},
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			t.Parallel()
			c := typed.Classify(tt.prompt, "/repo", policy.IntentSettings{})
			equal(t, c.Intent, tt.intent, "intent")
			if c.Confidence <= 0 || c.Confidence > 1 {
				t.Errorf("confidence %v outside (0, 1]", c.Confidence)
			}
			again := typed.Classify(tt.prompt, "/repo", policy.IntentSettings{})
			equal(t, again.Confidence, c.Confidence, "confidence on a second run")
		})
	}
}

func TestClassifyConfidence(t *testing.T) {
	t.Parallel()
	strong := typed.Classify("where is the auth function? find it", "", policy.IntentSettings{})
	weak := typed.Classify("the parser, find it", "", policy.IntentSettings{})
	if strong.Confidence <= weak.Confidence {
		t.Errorf("more evidence gave less confidence: %v <= %v", strong.Confidence, weak.Confidence)
	}
	contested := typed.Classify("explain how does auth work and where is it", "", policy.IntentSettings{})
	clear := typed.Classify("explain how does auth work", "", policy.IntentSettings{})
	if contested.Confidence >= clear.Confidence {
		t.Errorf("a competing intent did not lower confidence: %v >= %v", contested.Confidence, clear.Confidence)
	}
	equal(t, typed.Classify("hello there", "", policy.IntentSettings{}).Confidence, 0.1, "confidence without a cue")

	// Below MinConfidence the answer is "understand", with the low confidence kept.
	c := typed.Classify("find the parser", "", policy.IntentSettings{MinConfidence: 0.9})
	equal(t, c.Intent, "understand", "intent below the minimum")
	equal(t, c.Confidence, 0.65, "confidence below the minimum")

	// Two intents tied on one weak cue each fall below the default minimum.
	tied := typed.Classify("the parser: test and read", "", policy.IntentSettings{})
	equal(t, tied.Intent, "understand", "tied intent")
	equal(t, tied.Confidence, 0.25, "tied confidence")
}

func TestClassifyCustomKeywords(t *testing.T) {
	t.Parallel()
	s := policy.IntentSettings{Keywords: map[string][]string{
		"locate": {"wo ist"},
		"deploy": {"ship it", "roll out"},
	}}
	equal(t, typed.Classify("wo ist die Funktion auth", "", s).Intent, "locate", "added keyword")
	equal(t, typed.Classify("ship it to staging", "", s).Intent, "deploy", "custom intent")
	equal(t, typed.Classify("ship it to staging", "", policy.IntentSettings{}).Intent, "understand", "without the settings")
	// A keyword repeated from the built-in list counts once.
	dup := policy.IntentSettings{Keywords: map[string][]string{"locate": {"find", "FIND"}}}
	equal(t, typed.Classify("find x", "", dup).Confidence, typed.Classify("find x", "", policy.IntentSettings{}).Confidence, "duplicate keyword")
}

func TestClassifyTargetHints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prompt, workspace string
		name, typ, domain string // "" means unset
		wantHints         bool
	}{
		{"where is the auth function?", "/repo", "auth", "function", "coding", true},
		{"run the tests for `parseConfig`", "", "parseConfig", "symbol", "coding", true},
		{"what does `src/server.rs` export", "", "src/server.rs", "file", "coding", true},
		{"open main.go.", "", "main.go", "file", "coding", true},
		{"list src/protocol/", "", "src/protocol/", "directory", "coding", true},
		{"can you please find AhpServer", "", "AhpServer", "symbol", "coding", true},
		{"who calls handle_event?", "", "handle_event", "symbol", "coding", true},
		{"why does parse() panic", "", "parse", "function", "coding", true},
		{"where is http.Handler implemented", "", "http.Handler", "symbol", "coding", true},
		{"where is the Config struct", "", "Config", "type", "coding", true},
		{"explain the function called parse_config", "", "parse_config", "function", "coding", true},
		{"find function parse", "", "parse", "function", "coding", true},
		{"read the node.js docs and/or the guide", "", "", "", "", false},
		{"deploy the pods to the cluster", "", "", "", "operations", true},
		{"proofread this paragraph", "/home/me/notes", "", "", "writing", true},
		{"hello there", "/srv/repo", "", "", "coding", true},
		{"hello there", "", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			t.Parallel()
			h := typed.Classify(tt.prompt, tt.workspace, policy.IntentSettings{}).Hints
			equal(t, h != nil, tt.wantHints, "hints present")
			equal(t, h.GetTargetName(), tt.name, "target_name")
			equal(t, h.GetTargetType(), tt.typ, "target_type")
			equal(t, h.GetDomain(), tt.domain, "domain")
			equal(t, h != nil && h.TargetName != nil, tt.name != "", "target_name set")
		})
	}
}

// TestIntentReferenceExample: the §3.3 example prompt is a locate.
func TestIntentReferenceExample(t *testing.T) {
	t.Parallel()
	d := decide(t, intentEvent("where is the auth function?", "/repo"), policy.Result{}, nil, policy.Settings{})
	a := d.GetIntentDetection().GetAllow()
	equal(t, a.GetDetectedIntent(), "locate", "detected_intent")
	equal(t, a.GetConfidence(), float32(0.82), "confidence")
	equal(t, a.GetTargetHints().GetTargetType(), "function", "target_type")
	equal(t, a.GetTargetHints().GetTargetName(), "auth", "target_name")
	equal(t, a.GetTargetHints().GetDomain(), "coding", "domain")
	equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_ALLOW, "verdict")
}

func TestIntentRuleAnswers(t *testing.T) {
	t.Parallel()
	ev := intentEvent("where is the auth function?", "/repo")
	t.Run("intent without confidence is certain", func(t *testing.T) {
		t.Parallel()
		d := decide(t, ev, typedResult(policy.TypedAnswer{RuleID: "r", Action: "allow", Intent: "validate"}), nil, policy.Settings{})
		a := d.GetIntentDetection().GetAllow()
		equal(t, a.GetDetectedIntent(), "validate", "intent")
		equal(t, a.GetConfidence(), float32(1), "confidence")
		equal(t, a.GetTargetHints().GetTargetName(), "auth", "hints still extracted")
	})
	t.Run("allow without intent keeps the classifier", func(t *testing.T) {
		t.Parallel()
		d := decide(t, ev, typedResult(policy.TypedAnswer{RuleID: "r", Action: "allow"}), nil, policy.Settings{})
		equal(t, d.GetIntentDetection().GetAllow().GetDetectedIntent(), "locate", "intent")
	})
	t.Run("block", func(t *testing.T) {
		t.Parallel()
		d := decide(t, ev, typedResult(policy.TypedAnswer{RuleID: "r", Action: "block", Reason: "no code search here"}), nil, policy.Settings{})
		equal(t, d.GetIntentDetection().GetBlock().GetReason(), "no code search here", "reason")
	})
	t.Run("custom intents from settings reach the wire", func(t *testing.T) {
		t.Parallel()
		s := policy.Settings{Intent: policy.IntentSettings{Keywords: map[string][]string{"deploy": {"ship it"}}}}
		d := decide(t, intentEvent("ship it now", ""), policy.Result{}, nil, s)
		equal(t, d.GetIntentDetection().GetAllow().GetDetectedIntent(), "deploy", "intent")
	})
}
