package bench

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/config"
)

func TestHistogramCellLayout(t *testing.T) {
	t.Parallel()
	// Every value falls in the cell whose range holds it, and cells tile the line without gaps.
	var next uint64
	for b := range 6 {
		n := subBucketHalf
		if b == 0 {
			n = subBucketCount
		}
		for c := range n {
			lo, hi := cellRange(b, c)
			if lo != next {
				t.Fatalf("cell (%d,%d) starts at %d, want %d", b, c, lo, next)
			}
			for _, v := range []uint64{lo, hi} {
				if gb, gc := locate(v); gb != b {
					t.Fatalf("locate(%d): gb = %v, want %v", v, gb, b)
				} else if gc != c {
					t.Fatalf("locate(%d): gc = %v, want %v", v, gc, c)
				}
			}
			next = hi + 1
		}
	}
	if b, _ := locate(^uint64(0)); b != bucketCount-1 {
		t.Errorf("the largest value is in bucket %d, want %d", b, bucketCount-1)
	}
}

func TestCorrelatorDeliversByID(t *testing.T) {
	t.Parallel()
	c := newCorrelator[int]()
	var waits []func(context.Context) (int, error)
	for _, id := range []string{"a", "b", "c"} {
		w, err := c.expect(id)
		if err != nil {
			t.Fatal(err)
		}
		waits = append(waits, w)
	}
	if _, err := c.expect("a"); err == nil {
		t.Error("a second wait for the same id was accepted")
	}
	// Answers in another order than the requests.
	for i, id := range []string{"c", "a", "b"} {
		if !c.deliver(id, i) {
			t.Fatalf("deliver(%q) found nobody waiting", id)
		}
	}
	if c.deliver("a", 9) {
		t.Error("a second answer for an id was delivered")
	}
	for i, want := range []int{1, 2, 0} {
		if got, err := waits[i](context.Background()); err != nil {
			t.Errorf("wait %d: %v", i, err)
		} else if got != want {
			t.Errorf("wait %d: got = %v, want %v", i, got, want)
		}
	}
}

func TestCorrelatorFailEndsEveryWait(t *testing.T) {
	t.Parallel()
	c := newCorrelator[string]()
	gone := errors.New("stream ended")
	var wg sync.WaitGroup
	for _, id := range []string{"x", "y"} {
		w, err := c.expect(id)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if _, err := w(context.Background()); !errors.Is(err, gone) {
				t.Errorf("wait ended with %v, want %v", err, gone)
			}
		})
	}
	c.fail(gone)
	wg.Wait()
	if _, err := c.expect("z"); !errors.Is(err, gone) {
		t.Errorf("expect after fail = %v", err)
	}
}

func TestCorrelatorWaitHonoursContext(t *testing.T) {
	t.Parallel()
	c := newCorrelator[int]()
	w, _ := c.expect("slow")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := w(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait = %v", err)
	}
	c.forget("slow")
	if c.deliver("slow", 1) {
		t.Error("a forgotten id still received its answer")
	}
}

// hooksAnswerLine renders a decision the way the bridge does, with the project's own encoder.
func hooksAnswerLine(t *testing.T, id string, d *ahpv1.Decision) []byte {
	t.Helper()
	out, err := hooks.EncodeMessage(&hooks.Message{ID: hooks.StringID(id), Result: hooks.RenderResult(d, "0.1")})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckHooksAnswer(t *testing.T) {
	t.Parallel()
	deny := &ahpv1.Decision{DecisionId: "d1", Verdict: ahpv1.Verdict_VERDICT_DENY, Effects: []*ahpv1.Effect{{
		RuleId: "deny-rm-rf-root", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no"}},
	}}}
	allow := &ahpv1.Decision{DecisionId: "d2", Verdict: ahpv1.Verdict_VERDICT_ALLOW}
	expect := FixedExpectation(VerdictAllow, VerdictDeny)

	for seq, d := range []*ahpv1.Decision{allow, deny} {
		a, id, err := parseHooksAnswer(hooksAnswerLine(t, "ev-1", d))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		if id != "ev-1" {
			t.Fatalf("parse: id = %v, want \"ev-1\"", id)
		}
		if err := checkHooksAnswer(a, uint64(seq), expect); err != nil {
			t.Errorf("%v answer refused: %v", d.GetVerdict(), err)
		}
		if err := checkHooksAnswer(a, uint64(seq+1), expect); !errors.Is(err, ErrWrongVerdict) {
			t.Errorf("%v answer to the other command: %v", d.GetVerdict(), err)
		}
	}

	for name, line := range map[string]string{
		"synthetic denial": `{"jsonrpc":"2.0","id":"e","result":{"protocolVersion":"0.1","effects":[{"type":"deny","reason":"Required policy backend unavailable."}],"extensions":{"dev.ahpgateway":{"synthetic":true,"failure":"unavailable"}}}}`,
		"synthetic allow":  `{"jsonrpc":"2.0","id":"e","result":{"protocolVersion":"0.1","effects":[],"extensions":{"dev.ahpgateway":{"synthetic":true}}}}`,
		"error":            `{"jsonrpc":"2.0","id":"e","error":{"code":-32003,"message":"backend unavailable"}}`,
		"empty":            `{"jsonrpc":"2.0","id":"e"}`,
	} {
		a, _, err := parseHooksAnswer([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := checkHooksAnswer(a, 0, FixedExpectation(VerdictAllow, VerdictAllow)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	for _, bad := range []string{`not json`, `{"id":7,"result":{}}`, `{"result":{}}`} {
		if _, _, err := parseHooksAnswer([]byte(bad)); err == nil {
			t.Errorf("parseHooksAnswer(%s) accepted", bad)
		}
	}
}

func TestCheckDecision(t *testing.T) {
	t.Parallel()
	expect := FixedExpectation(VerdictAllow, VerdictDeny)
	for name, d := range map[string]*ahpv1.Decision{
		"missing":   nil,
		"synthetic": {Verdict: ahpv1.Verdict_VERDICT_ALLOW, Synthetic: true},
		"replayed":  {Verdict: ahpv1.Verdict_VERDICT_ALLOW, Replayed: true},
		"wrong":     {Verdict: ahpv1.Verdict_VERDICT_DENY},
	} {
		if err := checkDecision(d, 0, expect); err == nil {
			t.Errorf("%s decision accepted", name)
		}
	}
	if err := checkDecision(&ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW}, 0, expect); err != nil {
		t.Error(err)
	}
}

func TestBridgeArgs(t *testing.T) {
	t.Parallel()
	up := bridgeSetup{bin: "b", upstream: "http://127.0.0.1:1"}.args("--once")
	if got := strings.Join(up, " "); got != "--upstream http://127.0.0.1:1 --failure-policy fail-closed --once" {
		t.Errorf("upstream args %q", got)
	}
	emb := bridgeSetup{bin: "b", policyFile: "p.yaml"}.args()
	if got := strings.Join(emb, " "); got != "--policy-poll 0 --policy p.yaml" {
		t.Errorf("embedded args %q", got)
	}
}

// TestServerProcessArgs: the child listens on a free loopback port with the policy and no hot
// reload; its audit settings reach it through a configuration file that ahp-server's own loader
// reads back as written, whatever the path holds.
func TestServerProcessArgs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := serverProcess{bin: "s", policyFile: "p.yaml", dir: dir}
	args, err := p.args()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(args, " "); got != "--addr 127.0.0.1:0 --policy p.yaml --policy-poll 0 --log-level warn --shutdown-timeout 10s" {
		t.Errorf("args %q", got)
	}
	p.auditPath, p.auditFsync = filepath.Join(dir, `odd "name": #1.jsonl`), "always"
	if args, err = p.args(); err != nil {
		t.Fatal(err)
	}
	if len(args) < 2 {
		t.Fatalf("args %q: len(args) = %v, want at least 2; no --config", args, len(args))
	}
	if args[len(args)-2] != "--config" {
		t.Fatalf("args %q: args[len(args)-2] = %v, want \"--config\"; no --config", args, args[len(args)-2])
	}
	file, err := config.Load(args[len(args)-1])
	if err != nil {
		t.Fatal(err)
	}
	mode, err := file.FsyncMode()
	if err != nil {
		t.Errorf("%v", err)
	} else if file.Audit.Path != p.auditPath {
		t.Errorf("file.Audit.Path = %v, want %v", file.Audit.Path, p.auditPath)
	} else if !file.Audit.Required {
		t.Errorf("file.Audit.Required is false")
	} else if mode != audit.FsyncAlways {
		t.Errorf("mode = %v, want audit.FsyncAlways", mode)
	} else if !file.AuditEnabled() {
		t.Errorf("file.AuditEnabled() is false")
	}
	env := withoutAHPEnv([]string{"PATH=/bin", "AHP_CONFIG=/etc/x.yaml", "HOME=/root", "AHP_ADDR=0.0.0.0:1"})
	if got := strings.Join(env, " "); got != "PATH=/bin HOME=/root" {
		t.Errorf("environment %q", got)
	}
}

func TestPadding(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 81, 82, 83, 5000} {
		p := padding(n)
		if len(p) != n {
			t.Errorf("len(p) = %v, want %v", len(p), n)
		} else if strings.ContainsAny(p, "\"\\\n") {
			t.Errorf("strings.ContainsAny(p, \"\\\"\\\\\\n\") is true")
		}
	}
}

// TestWaiterNeverWakesEarly: whatever mix of Go timer and fine timer a wait uses, it ends at or
// after the due time.
func TestWaiterNeverWakesEarly(t *testing.T) {
	t.Parallel()
	var w waiter
	defer w.stop()
	for i := range 40 {
		due := time.Now().Add(time.Duration(i%8) * 500 * time.Microsecond)
		if !w.until(context.Background(), due) {
			t.Fatal("until gave up without a cancelled context")
		}
		if now := time.Now(); now.Before(due) {
			t.Fatalf("woke %v early", due.Sub(now))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if w.until(ctx, time.Now().Add(time.Hour)) {
		t.Error("until waited out an hour on a cancelled context")
	}
}
