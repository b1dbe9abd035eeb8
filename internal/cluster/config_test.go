package cluster_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cluster"
)

// The speed settings have documented defaults, and a bad value is refused naming its field.
func TestSpeedSettingsDefaultAndValidate(t *testing.T) {
	t.Parallel()
	c := cluster.Config{Servers: []string{"nats://127.0.0.1:4222"}}.WithDefaults()
	if c.SessionWrites != cluster.Async || c.IdempotencyStorage != cluster.File || c.SessionWriteDelay != 0 || c.SessionFormat != cluster.Binary {
		t.Fatalf("defaults: session_writes %q, idempotency_storage %q, session_write_delay %v, session_format %q; want async, file, 0, binary",
			c.SessionWrites, c.IdempotencyStorage, c.SessionWriteDelay, c.SessionFormat)
	}
	for field, bad := range map[string]cluster.Config{
		"cluster.session_writes":      {SessionWrites: "later"},
		"cluster.idempotency_storage": {IdempotencyStorage: "disk"},
		"cluster.session_write_delay": {SessionWriteDelay: 2 * time.Second},
		"cluster.session_format":      {SessionFormat: "yaml"},
	} {
		bad.Servers = []string{"nats://127.0.0.1:4222"}
		err := bad.Validate()
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v, want one naming the field", field, err)
		}
	}
	ok := cluster.Config{Servers: []string{"nats://127.0.0.1:4222"}, SessionWrites: cluster.Sync, IdempotencyStorage: cluster.Memory, SessionWriteDelay: 10 * time.Millisecond, SessionFormat: cluster.JSON}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid settings refused: %v", err)
	}
}
