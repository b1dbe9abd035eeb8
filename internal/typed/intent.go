package typed

import (
	"math"
	"slices"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// intentKind answers intent_detection: allow{detected_intent, confidence, target_hints?} or block.
var intentKind = &kind{
	name:   "intent_detection",
	refuse: setIntentBlock,
	decide: decideIntent,
}

// decideIntent (a rule's block is applied by Decide): a rule's Intent (with its Confidence, or 1)
// replaces the classifier's intent; target hints always come from the prompt.
func decideIntent(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace {
	p := in.ev.GetIntentDetection()
	c := Classify(p.GetPrompt(), p.GetWorkspace(), in.s.Intent)
	var tr trace
	if ta != nil && ta.Intent != "" {
		c.Intent, c.Confidence = ta.Intent, 1
		if ta.Confidence > 0 && ta.Confidence <= 1 {
			c.Confidence = ta.Confidence
		}
	}
	if ta != nil && (ta.Intent != "" || ta.Action == "allow") {
		tr.ruleID = ta.RuleID
	}
	d.Typed = &ahpv1.Decision_IntentDetection{IntentDetection: &ahpv1.IntentDetectionDecision{
		Decision: &ahpv1.IntentDetectionDecision_Allow_{Allow: &ahpv1.IntentDetectionDecision_Allow{
			DetectedIntent: c.Intent,
			Confidence:     float32(c.Confidence),
			TargetHints:    c.Hints,
		}},
	}}
	return tr
}

func setIntentBlock(d *ahpv1.Decision, reason string) {
	d.Typed = &ahpv1.Decision_IntentDetection{IntentDetection: &ahpv1.IntentDetectionDecision{
		Decision: &ahpv1.IntentDetectionDecision_Block{Block: block(reason)},
	}}
}

// Classification is what Classify found in a prompt.
type Classification struct {
	// Intent is one of the nine perception intents, or a custom intent from the settings.
	Intent string
	// Confidence is in (0, 1].
	Confidence float64
	// Hints point at the prompt's target; nil when nothing was found.
	Hints *ahpv1.TargetHints
}

// Intent names, in the order that breaks ties: the more specific intent first, "understand" (the
// fallback) last.
var intentOrder = []string{
	"locate", "compare", "validate", "track", "retrieve", "recognize", "explore", "reason", "understand",
}

// fallbackIntent is the answer when the prompt gives no clear signal.
const fallbackIntent = "understand"

// leadBonus is added to a cue that opens the request: "find ..." is a stronger signal than a
// "find" deep in a sentence, but not strong enough to outvote a longer cue elsewhere.
const leadBonus = 0.5

// noSignalConfidence is the confidence of the fallback when no keyword matched at all.
const noSignalConfidence = 0.1

// builtinKeywords are English cue phrases per intent. A phrase matches whole words in order, so
// "find" does not match "findings".
var builtinKeywords = map[string][]string{
	"locate": {"where is", "where are", "where's", "where does", "where do", "where can", "find",
		"locate", "look for", "search for", "which file", "which files", "path to", "defined",
		"definition of", "declared"},
	"understand": {"why", "explain", "how does", "how do", "how is", "what does", "what do",
		"understand", "meaning of", "purpose of", "walk me through", "tell me about", "describe",
		"clarify"},
	"compare": {"compare", "comparison", "diff", "difference", "differences", "different from", "vs",
		"versus", "better than", "compared to", "pros and cons", "tradeoff", "tradeoffs", "trade off",
		"trade offs"},
	"validate": {"test", "tests", "verify", "check", "validate", "is it correct", "is this correct",
		"does it work", "ensure", "confirm", "lint", "review", "make sure"},
	"retrieve": {"show me", "get", "fetch", "read", "open", "print", "list", "give me", "retrieve",
		"display", "cat", "download"},
	"explore": {"explore", "overview", "browse", "structure of", "what's in", "what is in", "tour",
		"look around", "architecture", "layout"},
	"reason": {"should i", "should we", "what if", "best way", "how should", "decide", "design",
		"approach", "figure out", "reason about", "think through", "plan"},
	"track": {"track", "monitor", "watch", "history of", "changelog", "when did", "who changed",
		"over time", "status of", "progress of", "keep an eye on"},
	"recognize": {"identify", "recognize", "recognise", "what kind of", "what type of", "classify",
		"detect", "is this a", "which language"},
}

// leadIns are words a request may open with before its verb ("can you please find ..."); a cue
// right after them counts as the opening cue.
var leadIns = setOf("please", "can", "could", "would", "will", "you", "hey", "hi", "ok", "okay",
	"so", "now", "i", "we", "want", "need", "to", "let", "lets", "s", "us", "me", "help", "just", "and")

// phrase is one cue phrase of an intent.
type phrase struct {
	intent string
	words  []string
	// key identifies the phrase so that each one counts once.
	key string
}

// phraseIndex maps a phrase's first word to the phrases starting with it.
type phraseIndex map[string][]*phrase

// builtinIndex is built once at init and never changes.
var builtinIndex = indexPhrases(nil, builtinKeywords)

// indexPhrases adds the phrases of keywords to idx, skipping ones already there.
func indexPhrases(idx phraseIndex, keywords map[string][]string) phraseIndex {
	if idx == nil {
		idx = phraseIndex{}
	}
	for intent, list := range keywords {
		intent = strings.ToLower(strings.TrimSpace(intent))
		if intent == "" {
			continue
		}
		for _, kw := range list {
			ws := words(nil, kw, false)
			if len(ws) == 0 {
				continue
			}
			key := intent + "\x00" + strings.Join(ws, " ")
			if slices.ContainsFunc(idx[ws[0]], func(p *phrase) bool { return p.key == key }) {
				continue
			}
			idx[ws[0]] = append(idx[ws[0]], &phrase{intent: intent, words: ws, key: key})
		}
	}
	return idx
}

// Classify finds the intent of prompt with keyword cues, the built-in ones plus s.Keywords (which
// may also name custom intents).
//
// Each distinct cue found earns its length in words, plus a half when it opens the request (after
// lead-ins such as "can you please"). With best and runner-up scores b and r, the confidence is
// (1 - 2^-b) × b/(b+r): it grows with the evidence and shrinks when another intent competes. A
// confidence below s.MinConfidence (default 0.3) answers "understand" with that low confidence; a
// prompt without any cue answers "understand" with 0.1. Ties go to the more specific intent.
//
// Hints name the prompt's target, the first found of: a `backticked` name, a file or directory
// path, a code identifier (CamelCase, snake_case, pkg.Name, call()), a word next to a noun such
// as "function" or "struct". Its domain comes from cue words, with "coding" favoured for a code
// target or a workspace that looks like a checkout (/repo, .../src). The result depends only on
// the arguments.
func Classify(prompt, workspace string, s policy.IntentSettings) Classification {
	s = intentDefaults(s)
	ws := words(nil, prompt, false)
	lead := 0
	for lead < len(ws) && isLeadIn(ws[lead]) {
		lead++
	}
	scores := map[string]float64{}
	seen := map[string]bool{}
	match := func(idx phraseIndex) {
		for i, w := range ws {
			for _, p := range idx[w] {
				if seen[p.key] || !hasWordsAt(ws, i, p.words) {
					continue
				}
				seen[p.key] = true
				weight := float64(len(p.words))
				if i == lead {
					weight += leadBonus
				}
				scores[p.intent] += weight
			}
		}
	}
	match(builtinIndex)
	if len(s.Keywords) > 0 {
		match(indexPhrases(nil, s.Keywords))
	}

	c := Classification{Intent: fallbackIntent, Confidence: noSignalConfidence, Hints: targetHints(prompt, workspace)}
	best, second := "", 0.0
	for _, intent := range rankedIntents(scores) {
		switch {
		case best == "":
			best = intent
		case scores[intent] > second:
			second = scores[intent]
		}
	}
	if best == "" {
		return c
	}
	b := scores[best]
	conf := confidence((1 - math.Pow(2, -b)) * b / (b + second))
	c.Confidence = conf
	if conf >= s.MinConfidence {
		c.Intent = best
	}
	return c
}

// rankedIntents lists the intents with a score, best first, ties in intentOrder and then by name.
func rankedIntents(scores map[string]float64) []string {
	out := make([]string, 0, len(scores))
	for intent := range scores {
		out = append(out, intent)
	}
	order := func(intent string) int {
		if i := slices.Index(intentOrder, intent); i >= 0 {
			return i
		}
		return len(intentOrder)
	}
	slices.SortFunc(out, func(a, b string) int {
		switch {
		case scores[a] != scores[b]:
			if scores[a] > scores[b] {
				return -1
			}
			return 1
		case order(a) != order(b):
			return order(a) - order(b)
		}
		return strings.Compare(a, b)
	})
	return out
}

func isLeadIn(w string) bool {
	_, ok := leadIns[w]
	return ok
}

// hasWordsAt reports whether ws continues with phrase at position i.
func hasWordsAt(ws []string, i int, phrase []string) bool {
	if i+len(phrase) > len(ws) {
		return false
	}
	for k, p := range phrase {
		if ws[i+k] != p {
			return false
		}
	}
	return true
}
