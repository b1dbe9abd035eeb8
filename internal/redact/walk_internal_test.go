package redact

import (
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestFieldFailureBecomesPlaceholder drives the per-field recovery: walking a field with a value
// of the wrong shape panics inside the walker, and the field must come out as a placeholder.
func TestFieldFailureBecomesPlaceholder(t *testing.T) {
	t.Parallel()
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tool := &ahpv1.Tool{
		Input:  &structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewStringValue("v")}},
		Output: structpb.NewStringValue("v"),
		Error:  &ahpv1.ToolError{Message: "m"},
	}
	m := tool.ProtoReflect()
	fields := m.Descriptor().Fields()
	bad := protoreflect.ValueOfInt64(1) // not a message: walking these fields panics
	w := r.newWalker()
	for _, name := range []protoreflect.Name{"input", "output", "error"} {
		fd := fields.ByName(name)
		w.push(pathSeg{name: string(name), index: -1})
		w.field(m, fd, bad)
		w.pop()
	}
	ph := Placeholder(KindError)
	if got := tool.GetInput().GetFields()["redacted"].GetStringValue(); got != ph || len(tool.GetInput().GetFields()) != 1 {
		t.Errorf("input = %v", tool.GetInput())
	}
	if tool.GetOutput().GetStringValue() != ph {
		t.Errorf("output = %v", tool.GetOutput())
	}
	if tool.GetError() != nil {
		t.Errorf("error = %v, want cleared", tool.GetError())
	}
	rep := w.finish()
	if !rep.Failed() || len(rep.Masked) != 3 || rep.Masked[0] != (Finding{Path: "error", Kind: KindError}) {
		t.Errorf("report %+v", rep)
	}
	if len(w.path) != 0 {
		t.Errorf("path not unwound: %v", w.path)
	}
}
