package mergepatch_test

import (
	"testing"

	"github.com/ahp-gateway/ahp/internal/mergepatch"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

func parse(t *testing.T, s string) *structpb.Struct {
	t.Helper()
	var v structpb.Struct
	if err := protojson.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// The examples of RFC 7386 §3 that an object target can express, plus a nested delete.
func TestApply(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		{`{"a":{"x":1}}`, `{"a":{"y":{"z":null}}}`, `{"a":{"x":1,"y":{}}}`},
	} {
		target, patch := parse(t, c.target), parse(t, c.patch)
		before := proto.Clone(target)
		got := mergepatch.Apply(target, patch)
		if want := parse(t, c.want); !proto.Equal(got, want) {
			t.Errorf("Apply(%s, %s) = %s, want %s", c.target, c.patch, protojson.Format(got), c.want)
		}
		if !proto.Equal(target, before) {
			t.Errorf("Apply(%s, %s) changed its target", c.target, c.patch)
		}
	}
}
