package tracing_test

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/tracing"
	"google.golang.org/protobuf/types/known/structpb"
)

// An event carries its agent's trace context the Agent Hooks way.
func ExampleEventSpanContext() {
	ext, _ := structpb.NewStruct(map[string]any{
		"org.w3c.trace_context": map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
	})
	sc, ok := tracing.EventSpanContext(&ahpv1.Event{Id: "evt_1", Extensions: ext})
	fmt.Println(ok, sc.TraceID(), sc.SpanID(), sc.IsSampled(), sc.IsRemote())
	// Output:
	// true 0af7651916cd43dd8448eb211c80319c b7ad6b7169203331 true true
}
