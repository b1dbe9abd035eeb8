package jsonwire

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// jsonParseCases are documents that exercise the corners where a hand-written parser could part
// from encoding/json: escapes and surrogates, numbers, whitespace, nesting, repeated keys at
// various depths, and trailing or missing bytes.
var jsonParseCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `"x"`, ` {"a":1} `, "\t{\"a\":1}\r\n",
	`{"a":"\u0061\n\t\"\\\/\b\f\r"}`, `{"\u0061":1,"a":2}`, `{"a":{"b":1,"b":2},"a":3}`,
	`{"a":1,"a":2,"b":{"c":1,"c":1}}`, `[{"x":1,"x":2}]`, `{"l":[1,[2,{"k":1,"k":2}]]}`,
	`{"s":"\ud83d\ude00","lone":"\ud83d","low":"\ude00","pair2":"\ud83d\ud83d\ude00","bad":"\ud83dx"}`,
	`{"s":"\ud83d\u0041"}`, `{"é":"ü","\u2028":"\u2029"}`, `{"":1,"":2}`, `{"a":1,"":{"":[]}}`,
	`{"n":[0,-1,1e5,1E-5,0.25,-0.0,123456789012345678901234567890,1e400]}`,
	`{"a":1}x`, `{"a":1} {}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":+1}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"` + "\x01" + `"}`, `{"a":tru}`, `{"a" 1}`, `{"a":1,}`, `[1,]`,
	`{,}`, `{"a":1`, `[`, ``, ` `, `"unterminated`, "{\"a\":\"\xff\"}", "\xef\xbb\xbf{}", `{'a':1}`,
	`{"a":"\'"}`, strings.Repeat("[", 1200) + strings.Repeat("]", 1200),
	strings.Repeat(`{"a":`, 999) + "1" + strings.Repeat("}", 999),
	`{` + strings.Repeat(`"k":1,`, 20) + `"z":1}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":3}`,
}

// hooksCases are the Agent Hooks test documents (internal/codec/hooks/testdata), used as inputs.
const hooksCases = "../hooks/testdata/*/*.json*"

func checkParseMatchesSlow(t *testing.T, data []byte) {
	t.Helper()
	v, err := Parse(data)
	wantV, wantErr := parseStd(data)
	if !reflect.DeepEqual(v, wantV) {
		t.Fatalf("%q: value %#v, encoding/json gives %#v", data, v, wantV)
	}
	if !reflect.DeepEqual(err, wantErr) {
		t.Fatalf("%q: error %v, encoding/json path gives %v", data, err, wantErr)
	}
}

func TestJSONParseMatchesStd(t *testing.T) {
	for _, c := range jsonParseCases {
		checkParseMatchesSlow(t, []byte(c))
	}
	paths, _ := filepath.Glob(hooksCases)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkParseMatchesSlow(t, data)
		// Every document encoding/json reads must take the fast path, or this test proves little.
		if _, err := parseStd(data); !errors.Is(err, ErrSyntax) {
			if _, _, _, ok := parseFast(data); !ok {
				t.Errorf("%s: the fast parser refuses a document encoding/json reads", p)
			}
		}
	}
}

// FuzzJSONParseMatchesStd checks that the one-pass parser gives what the encoding/json path gives,
// value and error alike, for any input.
func FuzzJSONParseMatchesStd(f *testing.F) {
	for _, c := range jsonParseCases {
		f.Add([]byte(c))
	}
	paths, _ := filepath.Glob(hooksCases)
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParseMatchesSlow(t, data)
	})
}
