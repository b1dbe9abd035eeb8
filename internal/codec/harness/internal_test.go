package harness

import (
	"encoding/json"
	"math"
	"testing"
)

// TestFormatF64 checks float printing against serde_json 1.0.149 (zmij), whose tests these
// values come from.
func TestFormatF64(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   float64
		want string
	}{
		{1, "1.0"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1.5, "1.5"},
		{30000, "30000.0"},
		{43210.1, "43210.1"},
		{-5942736479622170.0, "-5942736479622170.0"},
		{5.444310685350916e+14, "544431068535091.6"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e+16"},
		{1.8446744073709552e19, "1.8446744073709552e+19"},
		{3.439070283483335e+35, "3.439070283483335e+35"},
		{6.62607015e-34, "6.62607015e-34"},
		{5e-324, "5e-324"},
		{1e-5, "0.00001"},
		{1.5e-6, "1.5e-6"},
		{float64(float32(0.95)), "0.949999988079071"},
		{math.Inf(1), "inf"},
	}
	for _, tt := range tests {
		if got := formatF64(tt.in); got != tt.want {
			t.Errorf("formatF64(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRustQuote checks strings are quoted as Rust's Debug for str quotes them.
func TestRustQuote(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`a"b\c`:    `"a\"b\\c"`,
		"l\n\r\t":  `"l\n\r\t"`,
		"\x00\x7f": `"\0\u{7f}"`,
		"'":        `"'"`,
		"é":        `"é"`,
		"e\u0301":  `"e\u{301}"`,
		"\u00a0":   `"\u{a0}"`,
		"\u200b":   `"\u{200b}"`,
		"日本":       `"日本"`,
	}
	for in, want := range tests {
		if got := rustQuote(in); got != want {
			t.Errorf("rustQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestParseNumber checks numbers are classified as serde_json's parser classifies them.
func TestParseNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want numKind
	}{
		{"0", numPos},
		{"18446744073709551615", numPos},
		{"18446744073709551616", numFloat},
		{"-1", numNeg},
		{"-9223372036854775808", numNeg},
		{"-9223372036854775809", numFloat},
		{"-0", numFloat},
		{"1.0", numFloat},
		{"1e2", numFloat},
		{"1E2", numFloat},
	}
	for _, tt := range tests {
		if got := parseNumber(tt.in).kind; got != tt.want {
			t.Errorf("parseNumber(%s) kind = %v, want %v", tt.in, got, tt.want)
		}
	}
	if n, _ := numberOf(json.Number("-0")); unexpected(json.Number("-0")) != "floating point `-0.0`" || n.f != 0 {
		t.Errorf("-0 described as %s", unexpected(json.Number("-0")))
	}
	if got := unexpected(2.0); got != "integer `2`" {
		t.Errorf("a float64 without its text: %s", got)
	}
}

// TestOverlay checks that an overlay merged over the typed form gives the original back,
// and that it only holds what differs.
func TestOverlay(t *testing.T) {
	t.Parallel()
	orig := map[string]any{
		"a": json.Number("1"),
		"b": map[string]any{"keep": "x", "extra": nil},
		"c": []any{map[string]any{"id": "1"}, map[string]any{"id": "2", "deps": []any{}}},
		"d": map[string]any{"v": nil},
		"e": []any{"x", "y"},
	}
	enc := map[string]any{
		"a": json.Number("1.0"),
		"b": map[string]any{"keep": "x"},
		"c": []any{map[string]any{"id": "1"}, map[string]any{"id": "2"}},
		"d": "v",
		"e": []any{"x", "y"},
	}
	res := residue(orig, enc)
	want := map[string]any{
		"b": map[string]any{"extra": nil},
		"c": []any{map[string]any{}, map[string]any{"deps": []any{}}},
		"d": map[string]any{"v": nil},
	}
	if !jsonEqual(res, want) {
		t.Errorf("residue = %v, want %v", res, want)
	}
	if merged := merge(enc, res); !jsonEqual(merged, orig) {
		t.Errorf("merge = %v, want %v", merged, orig)
	}
}
