package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/policy"
)

// fakeReloader serves one policy and, on ReloadPolicy, swaps in next (if set).
type fakeReloader struct{ current, next *policy.Policy }

func (f *fakeReloader) Policy() *policy.Policy { return f.current }

func (f *fakeReloader) ReloadPolicy() error {
	if f.next != nil {
		f.current = f.next
	}
	return nil
}

// A SIGHUP that finds the policy file unchanged must not claim a reload; one that loads a new
// policy says so with both digests; without a -policy file there is nothing to reload.
func TestSIGHUPLogSaysWhatHappened(t *testing.T) {
	t.Parallel()
	// Any byte of the file counts toward the digest, so a trailing comment makes a new policy.
	changed, err := policy.Parse(append(policy.DefaultSource(), "\n# changed\n"...), "changed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if changed.Digest() == policy.Default().Digest() {
		t.Fatal("a changed file has the default policy's digest")
	}
	cases := []struct {
		name     string
		fromFile bool
		next     *policy.Policy
		want     string
	}{
		{"unchanged", true, nil, "policy file unchanged on SIGHUP"},
		{"changed", true, changed, "policy reloaded on SIGHUP"},
		{"no file", false, nil, "no -policy file to reload"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		reloadPolicyOnSIGHUP(&fakeReloader{current: policy.Default(), next: c.next}, c.fromFile, log)
		if got := buf.String(); !strings.Contains(got, c.want) || (c.next == nil && strings.Contains(got, "policy reloaded")) {
			t.Errorf("%s: log = %q, want %q", c.name, got, c.want)
		}
	}
}
