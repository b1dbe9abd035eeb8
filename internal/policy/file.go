package policy

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The YAML shapes below mirror the policy file one to one; compile.go turns them into rules. They
// are decoded strictly: an unknown field is an error that names it.

// policyFile is a whole policy file.
type policyFile struct {
	Version     int        `yaml:"version"`
	Name        string     `yaml:"name"`
	Description string     `yaml:"description"`
	Settings    Settings   `yaml:"settings"`
	Rules       []ruleSpec `yaml:"rules"`
}

// ruleSpec is one entry of `rules:`.
type ruleSpec struct {
	ID          string     `yaml:"id"`
	Description string     `yaml:"description"`
	On          []string   `yaml:"on"`
	Match       matchSpec  `yaml:"match"`
	When        string     `yaml:"when"`
	Mode        string     `yaml:"mode"`
	Fallback    string     `yaml:"fallback"`
	Effect      effectSpec `yaml:"effect"`
}

// matchSpec holds the cheap pre-filters of a rule.
type matchSpec struct {
	ToolKinds []string `yaml:"tool_kinds"`
	ToolNames []string `yaml:"tool_names"`
	Sources   []string `yaml:"sources"`
	Sessions  []string `yaml:"sessions"`
	Agents    []string `yaml:"agents"`
}

// effectSpec holds exactly one effect.
type effectSpec struct {
	Deny     *denySpec     `yaml:"deny"`
	Allow    *reasonSpec   `yaml:"allow"`
	Ask      *askSpec      `yaml:"ask"`
	Modify   *modifySpec   `yaml:"modify"`
	Defer    *deferSpec    `yaml:"defer"`
	Escalate *escalateSpec `yaml:"escalate"`
	Message  *messageSpec  `yaml:"message"`
	Typed    *typedSpec    `yaml:"typed"`
	Return   *returnSpec   `yaml:"return"`
	Flow     *flowSpec     `yaml:"flow"`
	Inject   *injectSpec   `yaml:"inject"`
}

// reasonSpec is a reason given as text or as a CEL string expression.
type reasonSpec struct {
	Reason     string `yaml:"reason"`
	ReasonExpr string `yaml:"reason_expr"`
}

type denySpec struct {
	reasonSpec `yaml:",inline"`
	Code       string `yaml:"code"`
}

type modifySpec struct {
	reasonSpec `yaml:",inline"`
	Merge      map[string]any `yaml:"merge"`
	MergeExpr  string         `yaml:"merge_expr"`
	Input      string         `yaml:"input"`
	// Target and Operation address the Hooks "draft" targets other than input (draft_effects.go).
	Target    string `yaml:"target"`
	Operation string `yaml:"operation"`
	Value     any    `yaml:"value"`
}

type deferSpec struct {
	reasonSpec   `yaml:",inline"`
	RetryAfterMs uint64 `yaml:"retry_after_ms"`
}

type askSpec struct {
	reasonSpec `yaml:",inline"`
	Approval   *approvalSpec `yaml:"approval"`
}

type escalateSpec struct {
	reasonSpec `yaml:",inline"`
	Target     string        `yaml:"target"`
	Approval   *approvalSpec `yaml:"approval"`
}

// approvalSpec is the `approval:` block of an ask or escalate effect (docs/approvals.md).
type approvalSpec struct {
	Hold      string   `yaml:"hold"`
	TTL       string   `yaml:"ttl"`
	Approvers []string `yaml:"approvers"`
	Notifiers []string `yaml:"notifiers"`
	OnTimeout string   `yaml:"on_timeout"`
}

type messageSpec struct {
	Text     string `yaml:"text"`
	TextExpr string `yaml:"text_expr"`
}

// typedSpec is a TypedAnswer in snake_case.
type typedSpec struct {
	Action       string   `yaml:"action"`
	Reason       string   `yaml:"reason"`
	Strategy     string   `yaml:"strategy"`
	Task         string   `yaml:"task"`
	Hints        []string `yaml:"hints"`
	Intent       string   `yaml:"intent"`
	Confidence   float64  `yaml:"confidence"`
	Facts        []string `yaml:"facts"`
	Knowledge    []string `yaml:"knowledge"`
	RetryAfterMs uint64   `yaml:"retry_after_ms"`
	MaxBackoffMs uint64   `yaml:"max_backoff_ms"`
}

// decodeStrict decodes exactly one YAML document into out, rejecting unknown fields. Error
// messages name fields by their YAML key and the section they appear in rather than by Go type.
func decodeStrict(data []byte, out any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty document")
		}
		return friendlyYAMLError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("more than one YAML document")
	}
	return nil
}

// yamlTypeNames replaces Go type names in yaml.v3 messages with what a policy author sees.
var yamlTypeNames = strings.NewReplacer(
	"policy.policyFile", "policy file",
	"policy.ruleSpec", "rule",
	"policy.matchSpec", "match",
	"policy.effectSpec", "effect",
	"policy.denySpec", "deny",
	"policy.reasonSpec", "effect",
	"policy.modifySpec", "modify",
	"policy.deferSpec", "defer",
	"policy.askSpec", "ask",
	"policy.escalateSpec", "escalate",
	"policy.approvalSpec", "approval",
	"policy.messageSpec", "message",
	"policy.typedSpec", "typed",
	"policy.Settings", "settings",
	"policy.IdleSettings", "settings.idle",
	"policy.IntentSettings", "settings.intent",
	"policy.ContextSettings", "settings.context",
	"policy.MemorySettings", "settings.memory",
	"policy.PlanningSettings", "settings.planning",
	"policy.ReasoningSettings", "settings.reasoning",
	"policy.RateLimitSettings", "settings.rate_limit",
	"policy.ConfirmationSettings", "settings.confirmation",
	"policy.testFile", "test file",
	"policy.testCaseSpec", "test case",
	"policy.expectSpec", "expect",
	"policy.sessionSpec", "session",
	"yaml: unmarshal errors:\n  ", "",
	"\n  ", "; ",
)

// unknownField matches yaml.v3's report of a field the target struct does not have.
var unknownField = regexp.MustCompile(`field (\S+) not found in type `)

func friendlyYAMLError(err error) error {
	msg := unknownField.ReplaceAllString(err.Error(), `unknown field "$1" in `)
	return errors.New(yamlTypeNames.Replace(msg))
}

// ruleLines returns the line of each entry of the top-level `rules:` sequence, so validation
// errors can point at the rule; it returns nil when the document has no such sequence.
func ruleLines(data []byte) []int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "rules" && top.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, n := range top.Content[i+1].Content {
				lines = append(lines, n.Line)
			}
			return lines
		}
	}
	return nil
}

// ruleIDPattern is the shape of a rule id: short, lower-case, safe in logs, metrics and URLs.
var ruleIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
