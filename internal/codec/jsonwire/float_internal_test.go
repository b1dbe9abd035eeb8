package jsonwire

import "testing"

func TestFormatFloatLikeSerde(t *testing.T) {
	t.Parallel()
	cases := map[float64]string{1: "1.0", 0.5: "0.5", float64(float32(0.95)): "0.949999988079071", 1e16: "1e+16", 1.5e20: "1.5e+20", 1e-7: "1e-7", 0: "0.0", -2: "-2.0", 123456.5: "123456.5"}
	for v, want := range cases {
		got, _ := formatFloat(v)
		if string(got) != want {
			t.Errorf("formatFloat(%v) = %s, want %s", v, got, want)
		}
	}
}
