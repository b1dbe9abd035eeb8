package service_test

import (
	"testing"

	"buf.build/go/protovalidate"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// BenchmarkValidateIntercept is the protovalidate check every Intercept pays (Services.validate),
// on the request ahp-bench sends: its share of a decision (issue 18).
func BenchmarkValidateIntercept(b *testing.B) {
	v, err := protovalidate.New()
	if err != nil {
		b.Fatal(err)
	}
	req := &ahpv1.InterceptRequest{Event: testkit.ShellEvent("a1b2c3-17", "ls -la", testkit.Source("urn:ahp-bench"), testkit.Session("bench-a1b2c3-w0"))}
	req.Event.Time = "2026-12-01T21:00:00Z"
	if err := v.Validate(req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(req); err != nil {
			b.Fatal(err)
		}
	}
}
