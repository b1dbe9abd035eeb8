package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// opaForTest returns an OPA binary: AHP_OPA_BIN, or one built from tools/opa.mod. Without one the
// test is skipped, unless AHP_OPA_OPTIONAL=0, which makes that a failure.
func opaForTest(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin, err := OPABinary(ctx, os.Getenv("AHP_OPA_BIN"))
	if err != nil {
		if os.Getenv("AHP_OPA_OPTIONAL") == "0" {
			t.Fatalf("OPA is required (AHP_OPA_OPTIONAL=0): %v", err)
		}
		t.Skipf("SKIPPED: no OPA (%v); set AHP_OPA_BIN or build it with scripts/opa, and AHP_OPA_OPTIONAL=0 to make this a failure", err)
	}
	return bin
}

func TestGenerateRules(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1, MaxRules + 1} {
		if _, err := GenerateRules(n); err == nil {
			t.Errorf("GenerateRules(%d) succeeded", n)
		}
	}
	rules, err := GenerateRules(50)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 50 || rules[49].ID != denyRule.ID {
		t.Fatalf("%d rules, last %q; want 50 ending with %q", len(rules), rules[len(rules)-1].ID, denyRule.ID)
	}
	ids := map[string]bool{}
	for _, r := range rules {
		if ids[r.ID] {
			t.Errorf("rule id %q twice", r.ID)
		}
		ids[r.ID] = true
		re := regexp.MustCompile(r.Pattern)
		if !re.MatchString(r.Sample) {
			t.Errorf("rule %s: pattern %q does not match its sample %q", r.ID, r.Pattern, r.Sample)
		}
		if r.ID != denyRule.ID && (re.MatchString(Commands[0]) || re.MatchString(Commands[1])) {
			t.Errorf("rule %s matches a benchmark command; only the last rule may", r.ID)
		}
	}
	if _, err := CELPolicy("x", []Rule{{ID: "q", Pattern: `a"b`, Reason: "r"}}); err == nil {
		t.Error("a pattern with a quote was written into the CEL policy")
	}
	if _, err := RegoPolicy([]Rule{{ID: "q", Pattern: `(`, Reason: "r"}}); err == nil {
		t.Error("a pattern RE2 does not compile was written into the Rego policy")
	}
}

// equivalenceEvents returns events that exercise every rule of rules: each rule's sample, a
// near miss of each template (a rule number outside the list), the benchmark's two commands, and
// the deny rule's command on a non-shell tool and on a tool.after event (allowed by both).
func equivalenceEvents(rules []Rule) []*ahpv1.Event {
	var events []*ahpv1.Event
	add := func(ev *ahpv1.Event) { events = append(events, ev) }
	for i, r := range rules {
		add(testkit.ShellEvent(fmt.Sprintf("sample-%d", i), r.Sample))
	}
	for i, tmpl := range ruleTemplates {
		add(testkit.ShellEvent(fmt.Sprintf("miss-%d", i), fmt.Sprintf(tmpl.sample, len(rules)+1000+i)))
	}
	for i, cmd := range Commands {
		add(testkit.ShellEvent(fmt.Sprintf("bench-%d", i), cmd))
	}
	add(testkit.ShellEvent("not-shell", Commands[1], testkit.Tool("Write", ahpv1.ToolKind_TOOL_KIND_FILE_WRITE)))
	add(testkit.ShellEvent("after", Commands[1], testkit.Type(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER)))
	return events
}

// TestPoliciesAreEquivalent generates both policies from one rule list and checks that, for every
// event of equivalenceEvents, ahp's policy engine and OPA (opa eval over all the inputs at once,
// each as the Connect JSON body ahp-server would receive) give the same verdict, and that OPA's
// reasons include that of the rule the event was made for.
func TestPoliciesAreEquivalent(t *testing.T) {
	t.Parallel()
	bin := opaForTest(t)
	dir := t.TempDir()
	files, err := WritePolicies(dir, "equivalence", 20)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(files.CEL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Parse(src, filepath.Base(files.CEL))
	if err != nil {
		t.Fatalf("the generated CEL policy does not load: %v", err)
	}
	if len(p.Rules()) != len(files.Rules) {
		t.Fatalf("CEL policy has %d rules, want %d", len(p.Rules()), len(files.Rules))
	}
	events := equivalenceEvents(files.Rules)
	var cases []json.RawMessage
	for _, ev := range events {
		body, err := protojson.Marshal(&ahpv1.InterceptRequest{Event: ev})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, body)
	}
	input, _ := json.Marshal(map[string]any{"cases": cases})
	inFile := filepath.Join(dir, "input.json")
	if err := os.WriteFile(inFile, input, 0o600); err != nil {
		t.Fatal(err)
	}
	query := "[d | some c in input.cases; d := data." + RegoPackage + ".decision with input as c]"
	cmd := exec.CommandContext(t.Context(), bin, "eval", "--format", "json", "--data", files.Rego, "--input", inFile, query)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("opa eval: %v\n%s", err, stderr.String())
	}
	var res struct {
		Result []struct {
			Expressions []struct {
				Value []struct {
					Allow   bool     `json:"allow"`
					Reasons []string `json:"reasons"`
				} `json:"value"`
			} `json:"expressions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Result) != 1 || len(res.Result[0].Expressions) != 1 {
		t.Fatalf("unexpected opa eval output (%v): %s", err, out)
	}
	opa := res.Result[0].Expressions[0].Value
	if len(opa) != len(events) {
		t.Fatalf("OPA decided %d inputs, want %d", len(opa), len(events))
	}
	denied := 0
	for i, ev := range events {
		r := p.Evaluate(policy.Input{Event: ev, Session: &policy.SessionView{}, Now: time.Now()})
		if len(r.Errors) > 0 {
			t.Errorf("%s: rule errors %v", ev.GetId(), r.Errors)
		}
		ahpAllow := r.Verdict == ahpv1.Verdict_VERDICT_ALLOW
		if !ahpAllow && r.Verdict != ahpv1.Verdict_VERDICT_DENY {
			t.Errorf("%s: ahp verdict %v, want allow or deny", ev.GetId(), r.Verdict)
		}
		if ahpAllow != opa[i].Allow {
			t.Errorf("%s (%q): ahp allow=%v (rules %v), OPA allow=%v (%v)", ev.GetId(),
				ev.GetTool().GetInput().GetFields()["command"].GetStringValue(), ahpAllow, r.MatchedRuleIDs, opa[i].Allow, opa[i].Reasons)
		}
		if !ahpAllow {
			denied++
		}
		if n, ok := strings.CutPrefix(ev.GetId(), "sample-"); ok {
			var k int
			fmt.Sscan(n, &k)
			if !slices.Contains(opa[i].Reasons, files.Rules[k].Reason) {
				t.Errorf("%s: OPA reasons %v lack %q", ev.GetId(), opa[i].Reasons, files.Rules[k].Reason)
			}
		}
	}
	// Every sample is denied, and the benchmark's Commands[1]; everything else is allowed.
	if want := len(files.Rules) + 1; denied != want {
		t.Errorf("%d events denied, want %d (one per rule, and the benchmark's own command)", denied, want)
	}
}

// TestInterceptJSONIsProtojson checks the HTTP JSON target's body against protojson: it decodes
// into the event the Connect modes send.
func TestInterceptJSONIsProtojson(t *testing.T) {
	t.Parallel()
	wl, err := NewWorkload(200)
	if err != nil {
		t.Fatal(err)
	}
	for seq := range uint64(2) {
		var got ahpv1.InterceptRequest
		body := wl.AppendInterceptJSON(nil, 2, seq)
		if err := protojson.Unmarshal(body, &got); err != nil {
			t.Fatalf("request %d: %v\n%s", seq, err, body)
		}
		if want := (&ahpv1.InterceptRequest{Event: wl.ToolBefore(2, seq)}); !proto.Equal(&got, want) {
			t.Errorf("request %d decodes to\n%v\nwant\n%v", seq, &got, want)
		}
		var opa struct{ Input json.RawMessage }
		if err := json.Unmarshal(wl.AppendOPAInput(nil, 2, seq), &opa); err != nil || !bytes.Equal(opa.Input, body) {
			t.Errorf("OPA body of request %d is not {\"input\": the Intercept body} (%v)", seq, err)
		}
	}
}

func TestAnswerVerdicts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		read func([]byte) (Verdict, error)
		body string
		want Verdict
		err  string
	}{
		{opaVerdict, `{"result":{"allow":true,"reasons":[]}}`, VerdictAllow, ""},
		{opaVerdict, `{"result":{"allow":false,"reasons":["x"]}}`, VerdictDeny, ""},
		{opaVerdict, `{}`, VerdictUnknown, "no result"},
		{opaVerdict, `{"result":{}}`, VerdictUnknown, "boolean allow"},
		{opaVerdict, `nope`, VerdictUnknown, "not JSON"},
		{connectJSONVerdict, `{"decision":{"verdict":"VERDICT_DENY"}}`, VerdictDeny, ""},
		{connectJSONVerdict, `{"decision":{"verdict":"VERDICT_ALLOW"}}`, VerdictAllow, ""},
		{connectJSONVerdict, `{"decision":{"verdict":"VERDICT_ALLOW","synthetic":true}}`, VerdictUnknown, "synthetic"},
		{connectJSONVerdict, `{"decision":{"verdict":"VERDICT_ALLOW","replayed":true}}`, VerdictUnknown, "replayed"},
		{connectJSONVerdict, `{}`, VerdictUnknown, "without a decision"},
	} {
		got, err := c.read([]byte(c.body))
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: got %v, %v; want %v, error containing %q", c.body, got, err, c.want, c.err)
		}
	}
}
