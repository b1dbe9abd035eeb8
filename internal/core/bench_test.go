package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

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
