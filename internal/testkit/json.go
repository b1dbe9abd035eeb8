package testkit

import (
	"encoding/json"
	"reflect"
	"testing"
)

// SameJSON reports whether got and want are the same JSON value, whatever their spacing and key
// order. It fails the test when either is not JSON.
func SameJSON(t testing.TB, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	return reflect.DeepEqual(g, w)
}
