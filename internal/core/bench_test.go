package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// BenchmarkCoreIntercept is the decision core alone (default policy, session memory, idempotency),
// without any transport.
func BenchmarkCoreIntercept(b *testing.B) {
	p := policy.Default()
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		if _, err := c.Intercept(ctx, shell(fmt.Sprintf("e%d", i), "ls -la"), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCoreObserve is one observation through the core (idempotency, session memory, hub),
// without audit or transport: the per-event core cost of ObserveStream.
func BenchmarkCoreObserve(b *testing.B) {
	p := policy.Default()
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		ev := shell(fmt.Sprintf("o%d", i), "ls -la")
		ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
		if dup, err := c.Observe(ctx, ev); err != nil || dup {
			b.Fatal(dup, err)
		}
	}
}
