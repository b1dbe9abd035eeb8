package cluster_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/config"
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

// ping_interval defaults to 5s and is refused outside 100ms..10m, naming the field.
func TestPingIntervalDefaultAndValidate(t *testing.T) {
	t.Parallel()
	if c := (cluster.Config{Servers: []string{"nats://127.0.0.1:4222"}}).WithDefaults(); c.PingInterval != 5*time.Second {
		t.Fatalf("default ping_interval %v, want 5s", c.PingInterval)
	}
	for _, d := range []time.Duration{-time.Second, time.Millisecond, 11 * time.Minute} {
		err := cluster.Config{Servers: []string{"nats://127.0.0.1:4222"}, PingInterval: d}.Validate()
		if err == nil || !strings.Contains(err.Error(), "cluster.ping_interval") || !strings.Contains(err.Error(), "between 100ms and 10m0s") {
			t.Errorf("ping_interval %v: error %v, want one naming the field and its bounds", d, err)
		}
	}
	for _, d := range []time.Duration{cluster.MinPingInterval, 30 * time.Second, cluster.MaxPingInterval} {
		if err := (cluster.Config{Servers: []string{"nats://127.0.0.1:4222"}, PingInterval: d}).Validate(); err != nil {
			t.Errorf("ping_interval %v refused: %v", d, err)
		}
	}
}

// The Kubernetes cluster overlay's config file decodes strictly and passes validation, with the
// settings its comments describe.
func TestClusterOverlayConfigIsValid(t *testing.T) {
	t.Parallel()
	f, err := config.Load(filepath.Join("..", "..", "docker", "k8s", "overlays", "cluster", "cluster-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Cluster
	c.Servers = []string{"nats://nats:4222"} // AHP_NATS_URL in the overlay
	if err := c.WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Replicas != 3 || c.PingInterval != 5*time.Second || c.LookupBudget != 10*time.Millisecond || c.OnUnavailable != cluster.Degrade {
		t.Fatalf("overlay cluster settings %+v", c)
	}
}
