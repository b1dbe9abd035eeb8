package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// BenchmarkCoreIntercept is the decision core alone (default policy, session memory, idempotency),
// without any transport.
func BenchmarkCoreIntercept(b *testing.B) {
	c, ctx := benchCore(b)
	i := 0
	for b.Loop() {
		i++
		if _, err := c.Intercept(ctx, testkit.ShellEvent(fmt.Sprintf("e%d", i), "ls -la"), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCoreInterceptDeadline is BenchmarkCoreIntercept under a context with a deadline and a
// cancel, as every call through the server has (its unary timeout): guarded CEL expressions then
// run under that context.
func BenchmarkCoreInterceptDeadline(b *testing.B) {
	c, ctx := benchCore(b)
	ctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	i := 0
	for b.Loop() {
		i++
		if _, err := c.Intercept(ctx, testkit.ShellEvent(fmt.Sprintf("e%d", i), "ls -la"), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCoreObserve is one observation through the core (idempotency, session memory, hub),
// without audit or transport: the per-event core cost of ObserveStream.
func BenchmarkCoreObserve(b *testing.B) {
	c, ctx := benchCore(b)
	i := 0
	for b.Loop() {
		i++
		ev := testkit.ShellEvent(fmt.Sprintf("o%d", i), "ls -la", testkit.Type(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER))
		if dup, err := c.Observe(ctx, ev); err != nil || dup {
			b.Fatal(dup, err)
		}
	}
}

// benchCore is a core with the default policy and in-memory stores, for benchmarks.
func benchCore(b *testing.B) (*core.Core, context.Context) {
	b.ReportAllocs()
	p := policy.Default()
	return core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: testkit.Discard()}), context.Background()
}
