package auditstream_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/auditstream"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func connect(t *testing.T, url, name string) *cluster.Conn {
	t.Helper()
	conn, err := cluster.Connect(cluster.Config{Servers: []string{url}, Name: name}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// A replica that restarts continues its chain from the stream, so the export of each replica is
// one chain that verifies; two replicas never mix.
func TestChainContinuesAcrossRestartsAndExportVerifies(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	publish := func(name string, from, to int) {
		t.Helper()
		p, err := auditstream.Open(ctx, connect(t, srv.URL(), name), auditstream.Options{Required: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			if err := p.Publish(audit.Record{Kind: audit.KindObservation, EventID: fmt.Sprintf("%s-%d", name, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish("ra", 0, 3)
	publish("rb", 0, 2)
	publish("ra", 3, 5) // ra restarted
	dir := t.TempDir()
	files, err := auditstream.Export(ctx, connect(t, srv.URL(), "exporter"), dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"ra": 5, "rb": 2} {
		path := filepath.Join(dir, name+".jsonl")
		if files[path] != want {
			t.Fatalf("export wrote %d records to %s, want %d (files %v)", files[path], path, want, files)
		}
		rep, err := audit.Verify(path)
		if err != nil || !rep.OK() || rep.Records != want {
			t.Fatalf("verify %s = %+v, %v", path, rep, err)
		}
	}
}
