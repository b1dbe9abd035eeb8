package bridge

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestRedactHidesCredentialShapes(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`invalid type: string "sk-proj-abcdefghijklmnop", expected u32`:      `invalid type: string "<redacted>", expected u32`,
		"unknown variant `ghp_0123456789abcdefghijABCDEFGHIJ`, expected one": "unknown variant `<redacted>`, expected one",
		`Authorization: Bearer abc.def`:                                      `Authorization: Bearer <redacted>`,
		`invalid value: integer ` + "`4111111111111111`" + `, expected u32`:  `invalid value: integer ` + "`<redacted>`" + `, expected u32`,
		`key 0123456789abcdef0123456789abcdef`:                               `key <redacted>`,
		`token dGhpcyBpcyBhIHNlY3JldCBrZXkgMTIzNDU2`:                         `token <redacted>`,
		`eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig`:                           `<redacted>`,
	}
	for in, want := range cases {
		if got := redact(in); got != want {
			t.Errorf("redact(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// TestRedactKeepsEveryReferenceVector runs the recorded Agent Harness error messages through
// redact: none of them holds a credential, so none may change.
func TestRedactKeepsEveryReferenceVector(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("..", "codec", "harness", "testdata", "errors.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var v struct{ Message string }
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if got := redact(v.Message); got != v.Message {
			t.Errorf("redact changed a reference message:\n%s\n%s", v.Message, got)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no vectors")
	}
	for _, s := range []string{
		"b372aa51-0c4e-4f6b-8f0e-5d2b9c7e1f33", "2026-11-29T20:03:57.142406630+00:00", "1.8446744073709552e+19",
		"dev.ahpgateway.policy.evaluation_error", "/workspace/src/internal/convert/harness_typed.go", "4294967296",
	} {
		if got := redact(s); got != s {
			t.Errorf("redact(%q) = %q; ordinary values must stay", s, got)
		}
	}
}
