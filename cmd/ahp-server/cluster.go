package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/fanout"
	"github.com/ahp-gateway/ahp/internal/cluster/idemkv"
	"github.com/ahp-gateway/ahp/internal/cluster/sessionkv"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/session"
)

// clusterStores are the shared stores of cluster mode, opened on one NATS connection.
type clusterStores struct {
	conn        *cluster.Conn
	idempotency *idemkv.Store
	sessions    *sessionkv.Store
	fanout      *fanout.Fanout
}

// openCluster connects to NATS and opens every shared store; servers from -nats replace the
// config file's.
func openCluster(ctx context.Context, cfg cluster.Config, servers []string, log *slog.Logger) (*clusterStores, error) {
	if len(servers) > 0 {
		cfg.Servers = servers
	}
	if !cfg.Enabled() {
		return nil, nil
	}
	conn, err := cluster.Connect(cfg, log)
	if err != nil {
		return nil, err
	}
	cs := &clusterStores{conn: conn}
	setupCtx, cancel := context.WithTimeout(ctx, conn.Config().ConnectTimeout)
	defer cancel()
	if cs.idempotency, err = idemkv.Open(setupCtx, conn, idemkv.Options{}); err != nil {
		conn.Close()
		return nil, err
	}
	if cs.sessions, err = sessionkv.Open(setupCtx, conn, session.Options{}); err != nil {
		conn.Close()
		return nil, err
	}
	cfg = conn.Config()
	log.Info("cluster mode: sharing state through NATS JetStream", "replica", cfg.Name, "prefix", cfg.Prefix,
		"replicas", cfg.Replicas, "on_unavailable", cfg.OnUnavailable)
	return cs, nil
}

// wire puts the shared stores into the server's configuration.
func (cs *clusterStores) wire(sc *server.Config, readyRequired bool) {
	if cs == nil {
		return
	}
	red := sc.Redactor
	sc.Fanout = func(local *hub.Hub) (hub.Publisher, error) {
		f, err := fanout.Start(cs.conn, local, fanout.Options{
			// Items leave the process redacted, as Watch shows them.
			Transform: func(it hub.Item) hub.Item {
				if red == nil {
					return it
				}
				ev, _ := red.Event(it.Event)
				d, _ := red.Decision(it.Decision)
				return hub.Item{Event: ev, Decision: d, Time: it.Time}
			},
			Logger: sc.Logger,
		})
		cs.fanout = f
		return f, err
	}
	sc.Idempotency = cs.idempotency
	sc.Sessions = cs.sessions
	sc.Unavailable = cs.conn.Unavailable
	if readyRequired {
		sc.Ready = cs.conn.Ready
	}
}

func (cs *clusterStores) close() {
	if cs == nil {
		return
	}
	if cs.fanout != nil {
		cs.fanout.Close()
	}
	cs.conn.Close()
}

// clusterFlagError explains a cluster flag given without a cluster.
func clusterFlagError(flag string) error {
	return fmt.Errorf("%s needs cluster mode: give -nats or a cluster: block in -config", flag)
}
