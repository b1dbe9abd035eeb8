package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/server"
)

// policyOf is the policy identity an answer of either dialect carries (issue 15): the digest and
// the cluster revision, under extensions[dev.ahpgateway] (Agent Hooks) or in the decision's
// metadata (Agent Harness). present says whether a revision key was there at all.
func policyOf(t *testing.T, line string) (digest string, revision float64, present bool) {
	t.Helper()
	var a struct {
		Result struct {
			Extensions struct {
				NS map[string]any `json:"dev.ahpgateway"`
			} `json:"extensions"`
			Metadata map[string]any `json:"metadata"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, line)
	}
	if ns := a.Result.Extensions.NS; ns != nil {
		digest, _ = ns["policyDigest"].(string)
		revision, present = ns["policyRevision"].(float64)
		return digest, revision, present
	}
	md := a.Result.Metadata
	digest, _ = md["dev.ahpgateway/policy_digest"].(string)
	revision, present = md["dev.ahpgateway/policy_revision"].(float64)
	return digest, revision, present
}

// TestAnswersNameThePolicyThatDecided drives the real binary, embedded with a policy file and in
// front of an ahp-server given the same file, and checks that every decision of both dialects
// and both Agent Hooks versions names that file's digest, and no revision (it is not a cluster
// policy).
func TestAnswersNameThePolicyThatDecided(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(policyDenyDeploy), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(policyDenyDeploy))
	want := "sha256:" + hex.EncodeToString(sum[:])
	up := clitest.Serve(t, server.Config{Logger: slog.New(slog.DiscardHandler), PolicyFile: file, PolicyPollInterval: -1})

	for _, mode := range []struct {
		name string
		args []string
	}{
		{"embedded", []string{"-policy", file}},
		{"upstream", []string{"-upstream", up, "-failure-policy", "fail-closed"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			p := startProc(t, mode.args...)
			p.send(t, hooksIntercept("v1", "make deploy"), hooksIntercept("v2", "ls"),
				draftIntercept("d1", "make deploy"), draftIntercept("d2", "ls"),
				harnessHandshake("h0"), harnessEvent("h1", "make deploy"), harnessEvent("h2", "ls"))
			for _, id := range []string{"v1", "v2", "d1", "d2", "h0", "h1", "h2"} {
				line := p.next(t)
				if id == "h0" {
					continue // the handshake is no decision
				}
				digest, rev, present := policyOf(t, line)
				if digest != want {
					t.Errorf("%s: policy digest %q, want %q: %s", id, digest, want, line)
				}
				if present {
					t.Errorf("%s: a policy revision %v for a policy from a file: %s", id, rev, line)
				}
			}
			p.finish(t)
		})
	}
}
