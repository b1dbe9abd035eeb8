package redact_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ahp-gateway/ahp/internal/redact"
)

// fuzzSecrets are recognisable by shape alone, wherever they are, once they start a word.
var fuzzSecrets = []string{
	"AKIAIOSFODNN7EXAMPLE",
	"ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
	"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",
	"xoxb-440268599528-9078666617603-enCkhvMdgaKjIg8xNbe3nNyj",
	"sk_live_Oq9wMxEhh2FDEEtfjgVvVqE1",
	"sk-proj-x6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM",
	"sk-ant-api03-S5SUkCnD8zRA9a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJf",
	"AIzac7Tvo_hBKqFYY_kv5ZJr3J1TWDtkwtDDb-x",
	"glpat-XgGCJbW56eCuNGMGmSrC",
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0t\n-----END RSA PRIVATE KEY-----",
}

// startsWord reports whether needle occurs in s at a word start (not after a letter or digit).
func startsWord(s, needle string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], needle)
		if i < 0 {
			return false
		}
		at := from + i
		if at == 0 || !isAlnum(s[at-1]) {
			return true
		}
		from = at + 1
	}
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// FuzzRedactString: redaction never panics, keeps valid UTF-8 valid, and never lets a planted
// secret through.
func FuzzRedactString(f *testing.F) {
	for _, p := range plants {
		f.Add(p.text)
	}
	for _, s := range ordinary {
		f.Add(s)
	}
	for _, s := range fuzzSecrets {
		f.Add("x=" + s + "; " + s)
	}
	f.Add("AKIAIOSFODNN7EXAMPLEsk-proj-x6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYrEqmSM")
	r, err := redact.New(redact.Config{MaxFieldBytes: 512})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, rep := r.String(in)
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 in, invalid out: %q -> %q", in, out)
		}
		if rep.Failed() {
			t.Fatalf("redaction failed on %q", in)
		}
		for _, s := range fuzzSecrets {
			if startsWord(in, s) && startsWord(out, s) {
				t.Fatalf("secret %q survived:\n in %q\nout %q", s, in, out)
			}
		}
		if len(in) <= 512 && rep.Empty() && out != in {
			t.Fatalf("changed without a report: %q -> %q", in, out)
		}
	})
}

// FuzzTruncate: a cut never splits a rune of valid UTF-8, never exceeds its limit, and keeps as
// much as it can (it gives back at most the three bytes of a partial rune).
func FuzzTruncate(f *testing.F) {
	f.Add("a"+strings.Repeat("é", 200), 300)
	f.Add(strings.Repeat("🙂", 10), 7)
	f.Add("日本語", 1)
	f.Add("ascii", 0)
	f.Add("ascii", -1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		out := redact.Truncate(s, n)
		if !strings.HasPrefix(s, out) {
			t.Fatalf("Truncate(%q, %d) = %q, not a prefix", s, n, out)
		}
		if len(s) <= n && out != s {
			t.Fatalf("Truncate(%q, %d) = %q, want it whole", s, n, out)
		}
		if len(out) > max(n, 0) {
			t.Fatalf("Truncate(%q, %d) = %q: %d bytes", s, n, out, len(out))
		}
		if utf8.ValidString(s) && (!utf8.ValidString(out) || n > 0 && len(out) < min(n, len(s))-(utf8.UTFMax-1)) {
			t.Fatalf("Truncate(%q, %d) = %q: split a rune or cut too much", s, n, out)
		}
	})
}
