package jsonwire

import (
	"bytes"
	"math"
	"strconv"
	"strings"
)

// F32 is a float carried as an f32 on the Harness wire. It marshals the way serde_json prints an
// f32 widened to f64: the shortest float64 text, always with a fraction ("1.0", "0.949999988079071").
type F32 float32

func (f F32) MarshalJSON() ([]byte, error) {
	return formatFloat(float64(float32(f)))
}

// formatFloat prints a float64 the way serde_json (ryu) does.
func formatFloat(v float64) ([]byte, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil // serde_json writes non-finite floats as null
	}
	abs := math.Abs(v)
	if abs != 0 && (abs < 1e-5 || abs >= 1e16) {
		s := strconv.FormatFloat(v, 'e', -1, 64)
		s = trimExponent(s)
		return []byte(s), nil
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".e") {
		s += ".0"
	}
	return []byte(s), nil
}

func trimExponent(s string) string {
	// Go writes "1e-07" and "1.5e+20"; serde_json writes "1e-7" and "1.5e+20": keep the sign,
	// drop leading zeros of the exponent.
	mant, exp, ok := strings.Cut(s, "e")
	if !ok || exp == "" {
		return s
	}
	sign := exp[:1]
	digits := strings.TrimLeft(exp[1:], "0")
	if digits == "" {
		digits = "0"
	}
	return mant + "e" + sign + digits
}
