package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bench"
)

var opaBin = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return bench.OPABinary(ctx, os.Getenv("AHP_OPA_BIN"))
})

// needOPA returns an OPA binary (AHP_OPA_BIN, or built from tools/opa.mod), or skips the test
// without one, unless AHP_OPA_OPTIONAL=0, which makes that a failure.
func needOPA(t *testing.T) string {
	t.Helper()
	bin, err := opaBin()
	if err != nil {
		if os.Getenv("AHP_OPA_OPTIONAL") == "0" {
			t.Fatalf("OPA is required (AHP_OPA_OPTIONAL=0): %v", err)
		}
		t.Skipf("SKIPPED: no OPA (%v); set AHP_OPA_BIN or build it with scripts/opa, and AHP_OPA_OPTIONAL=0 to make this a failure", err)
	}
	return bin
}

// TestCompareAgainstOPA runs the comparison briefly with OPA, the Connect JSON target and the
// bridge on HTTP, and checks correctness only: every answer right, a server-side cost for every
// serving process, ratios to OPA, and a picture with one curve per target.
func TestCompareAgainstOPA(t *testing.T) {
	t.Parallel()
	opa := needOPA(t)
	svg := filepath.Join(t.TempDir(), "compare.svg")
	var stdout, stderr bytes.Buffer
	args := []string{"compare", "--json", "--quiet", "--targets", "opa,intercept,bridge-http", "--rules", "20",
		"--requests", "300", "--concurrency", "2", "--rounds", "2", "--warmup", "0",
		"--opa-bin", opa, "--server-bin", needServer(t), "--bridge-bin", needBridge(t), "--svg", svg}
	if code := run(context.Background(), args, &stdout, &stderr, noEnv); code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	var report bench.CompareReport
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("no JSON report: %v\n%s", err, stdout.String())
	}
	if len(report.Results) != 3 || report.Rules != 20 {
		t.Fatalf("%d results for %d rules, want 3 for 20", len(report.Results), report.Rules)
	}
	wantCosts := map[string][]string{"opa": {"opa"}, "intercept": {"ahp-server"}, "bridge-http": {"ahp-jsonrpc-bridge", "ahp-server"}}
	for _, res := range report.Results {
		if res.Count != 300 || res.Errors != 0 || res.Latency.P50 <= 0 {
			t.Errorf("%s: %d requests, %d errors %v, p50 %v; want 300 without errors", res.Target, res.Count, res.Errors, res.ErrorKinds, res.Latency.P50)
		}
		if (res.VsOPA == nil) != (res.Target == "opa") {
			t.Errorf("%s: ratios to OPA %v", res.Target, res.VsOPA)
		}
		want := wantCosts[res.Target]
		if len(res.Cost) != len(want) {
			t.Fatalf("%s: %d costs %+v, want %v", res.Target, len(res.Cost), res.Cost, want)
		}
		for i, c := range res.Cost {
			if !strings.HasPrefix(c.Process, want[i]+" (pid ") || c.Error != "" || c.Decisions != 300 {
				t.Errorf("%s: cost %+v, want %s for 300 decisions", res.Target, c, want[i])
			}
			if c.BytesPerDecision <= 0 || c.AllocsPerDecision <= 0 {
				t.Errorf("%s, %s: %v B and %v allocations per decision; a decision allocates", res.Target, c.Process, c.BytesPerDecision, c.AllocsPerDecision)
			}
			if c.Series != "go_gc_heap_allocs_bytes_total" || c.LiveHeapBytes == nil {
				t.Errorf("%s, %s: runtime/metrics series missing (%q, live heap %v)", res.Target, c.Process, c.Series, c.LiveHeapBytes)
			}
		}
	}
	doc, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	paths := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "path" {
			paths++
		}
	}
	if paths != 3 {
		t.Errorf("the SVG has %d paths, want one per target (3)", paths)
	}
}

func TestCompareFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ args, want string }{
		{"compare --targets opa,nope", `unknown target "nope"`},
		{"compare --targets opa,opa", "given twice"},
		{"compare --rules 0", "-rules must be at least 1"},
		{"compare --server-env AHP_ADDR=x", "not AHP_*"},
		{"compare extra", `unexpected argument "extra"`},
		{"gen-policies --rules 20000", "outside [1, 10000]"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), strings.Fields(c.args), &stdout, &stderr, noEnv); code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %s)", c.args, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: stderr %q lacks %q", c.args, stderr.String(), c.want)
		}
	}
}

// TestSVGOfARun: --svg on the ordinary modes draws the run and its baseline.
func TestSVGOfARun(t *testing.T) {
	t.Parallel()
	svg := filepath.Join(t.TempDir(), "run.svg")
	benchJSON(t, "--mode", "intercept", "--baseline", "--requests", "200", "--warmup", "0", "--svg", svg)
	doc, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(doc, []byte("<path ")); n != 2 {
		t.Errorf("%d paths, want 2 (the run and the baseline)", n)
	}
	if !bytes.Contains(doc, []byte("noop:intercept")) {
		t.Error("the baseline is not in the legend")
	}
}

// TestConnectJSON: --connect-json makes the Connect modes speak JSON, and every answer still
// checks out.
func TestConnectJSON(t *testing.T) {
	t.Parallel()
	r := benchJSON(t, "--mode", "intercept", "--connect-json", "--requests", "100", "--warmup", "0")
	checkResult(t, &r.Run, "intercept")
	if !strings.Contains(r.Run.Target, "connect protocol, JSON") {
		t.Errorf("target %q does not say JSON", r.Run.Target)
	}
}

// TestCompareWithoutOPA: the comparison runs any subset of targets; with -bridge-embedded the
// bridge decides alone, so its only cost row is the bridge's own. Checks the text report.
func TestCompareWithoutOPA(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	args := []string{"compare", "--quiet", "--targets", "intercept-proto,bridge-stdio", "--bridge-embedded", "--rules", "10",
		"--requests", "200", "--concurrency", "2", "--warmup", "0", "--server-bin", needServer(t), "--bridge-bin", needBridge(t)}
	if code := run(context.Background(), args, &stdout, &stderr, noEnv); code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		`decisions/s`, `B/decision`, `allocs/decision`, `GC CPU %`,
		`(?m)^\s*intercept-proto\s+ahp-server \(pid \d+\)\s+\d+`, `(?m)^\s*bridge-stdio\s+ahp-jsonrpc-bridge \(pid \d+\)\s+\d+`,
		`embedded decision core`, `one list of 10 shell-command regex rules`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("report lacks %s:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`(?m)^\s*bridge-stdio\s+ahp-server`).MatchString(out) || strings.Contains(out, "ratio to opa") || strings.Contains(out, "ERROR") {
		t.Errorf("embedded bridge measured against a server, ratios without OPA, or an error:\n%s", out)
	}
}
