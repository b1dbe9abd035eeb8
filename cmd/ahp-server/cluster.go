package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/cli"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/approvalkv"
	"github.com/ahp-gateway/ahp/internal/cluster/auditstream"
	"github.com/ahp-gateway/ahp/internal/cluster/fanout"
	"github.com/ahp-gateway/ahp/internal/cluster/idemkv"
	"github.com/ahp-gateway/ahp/internal/cluster/policykv"
	"github.com/ahp-gateway/ahp/internal/cluster/sessionkv"
	"github.com/ahp-gateway/ahp/internal/config"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/session"
)

// clusterStores are the shared stores of cluster mode, opened on one NATS connection.
type clusterStores struct {
	conn        *cluster.Conn
	idempotency *idemkv.Store
	sessions    *sessionkv.Store
	fanout      *fanout.Fanout
	approvals   *approvalkv.Store
	audit       *auditstream.Publisher // nil unless audit.nats
}

// openCluster connects to NATS and opens every shared store; servers from -nats replace the
// config file's. With on_start_unavailable degrade and NATS not reachable, it returns at once:
// the stores decide with their local fallbacks and attach in the background when NATS comes. approvals bounds the shared approval store as it bounds the in-process one.
func openCluster(ctx context.Context, ext *extensions, servers []string, approvals approval.MemoryOptions, log *slog.Logger) (*clusterStores, error) {
	cfg := ext.cluster
	if len(servers) > 0 {
		cfg.Servers = servers
	}
	if !cfg.Enabled() {
		if ext.auditNATS {
			return nil, clusterFlagError("audit.nats")
		}
		return nil, nil
	}
	if ext.auditNATS && ext.audit == nil {
		return nil, errors.New("audit.nats publishes the audit log's records: turn the audit log on (-audit or an audit: path)")
	}
	conn, err := cluster.Connect(cfg, log)
	if err != nil {
		return nil, err
	}
	cs := &clusterStores{conn: conn}
	setupCtx, cancel := context.WithTimeout(ctx, conn.Config().SetupTimeout)
	defer cancel()
	cfg = conn.Config()
	if cs.idempotency, err = idemkv.Open(setupCtx, conn, idemkv.Options{MemoryStorage: cfg.IdempotencyStorage == cluster.Memory}); err != nil {
		conn.Close()
		return nil, err
	}
	writes := sessionkv.Options{Sync: cfg.SessionWrites == cluster.Sync, Delay: cfg.SessionWriteDelay, JSON: cfg.SessionFormat == cluster.JSON, Logger: log}
	if cs.sessions, err = sessionkv.Open(setupCtx, conn, session.Options{Redactor: ext.redactor}, writes); err != nil {
		conn.Close()
		return nil, err
	}
	if cs.approvals, err = approvalkv.Open(setupCtx, conn, approvals, log); err != nil {
		cs.sessions.Close()
		conn.Close()
		return nil, err
	}
	if ext.auditNATS {
		if cs.audit, err = auditstream.Open(setupCtx, conn, auditstream.Options{Redactor: ext.redactor, Required: ext.audit.Required()}); err != nil {
			cs.approvals.Close()
			cs.sessions.Close()
			conn.Close()
			return nil, err
		}
	}
	log.Info("cluster mode: sharing state through NATS JetStream", "replica", cfg.Name, "prefix", cfg.Prefix,
		"replicas", cfg.Replicas, "on_unavailable", cfg.OnUnavailable, "session_writes", cfg.SessionWrites)
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
	if cs.audit != nil {
		sc.AuditStream = cs.audit.Publish
	}
	sc.Sessions = cs.sessions
	sc.ApprovalStore = cs.approvals
	sc.Unavailable = cs.conn.Unavailable
	if readyRequired {
		sc.Ready = cs.ready
	}
	sc.Metrics.ClusterStats(cs.stats)
	cs.conn.ObserveLatency(sc.Metrics.ClusterLatency())
}

// ready is the readiness of cluster mode: NATS reachable and every shared store attached (a
// server started degraded attaches them in the background when NATS comes).
func (cs *clusterStores) ready() error {
	if err := cs.conn.Ready(); err != nil {
		return err
	}
	switch {
	case !cs.sessions.Attached():
		return errors.New("cluster: session bucket not attached yet")
	case !cs.idempotency.Attached():
		return errors.New("cluster: idempotency bucket not attached yet")
	case !cs.approvals.Attached():
		return errors.New("cluster: approval bucket not attached yet")
	case cs.audit != nil && !cs.audit.Attached():
		return errors.New("cluster: audit stream not attached yet")
	}
	return nil
}

func (cs *clusterStores) close() {
	if cs == nil {
		return
	}
	if cs.fanout != nil {
		cs.fanout.Close()
	}
	cs.approvals.Close()
	cs.sessions.Close() // stores the queued session changes
	cs.conn.Close()
}

// clusterFlagError explains a cluster flag given without a cluster.
func clusterFlagError(flag string) error {
	return fmt.Errorf("%s needs cluster mode: give -nats or a cluster: block in -config", flag)
}

// clusterFromFlags reads the cluster settings of a subcommand: the -config file's cluster block,
// with -nats replacing its servers.
func clusterFromFlags(configFile, natsURLs string) (cluster.Config, error) {
	var cfg cluster.Config
	if configFile != "" {
		f, err := config.Load(configFile)
		if err != nil {
			return cfg, err
		}
		cfg = f.Cluster
	}
	if s := cluster.ParseServers(natsURLs); len(s) > 0 {
		cfg.Servers = s
	}
	if !cfg.Enabled() {
		return cfg, errors.New("no NATS servers: give -nats URL (or AHP_NATS_URL) or a cluster: block in -config")
	}
	cfg.OnStartUnavailable = cluster.Refuse // a command that cannot reach NATS fails now
	return cfg, nil
}

const policyPushUsage = `Usage: ahp-server policy push [flags] FILE

Checks FILE as a policy and, if it compiles, stores it in the cluster's policy bucket; every
replica (and every bridge in embedded mode given --nats) switches to it. A broken policy is
refused and nothing is stored.

Flags:
`

// runPolicyPush is `ahp-server policy push`.
func runPolicyPush(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := cli.NewFlags("ahp-server policy push", stderr, getenv, policyPushUsage)
	natsURLs := fs.String("nats", "", "NATS server URLs, comma-separated", "AHP_NATS_URL")
	configFile := fs.String("config", "", "config file whose cluster: block says how to reach NATS", "AHP_CONFIG")
	if status, ok := fs.Parse(args); !ok {
		return status
	}
	if fs.NArg() != 1 {
		status := fs.Failf("want one policy FILE")
		fs.Usage()
		return status
	}
	file := fs.Arg(0)
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if _, err := policy.Parse(data, file); err != nil {
		fmt.Fprintf(stderr, "%v\nnot pushed: the cluster keeps its policy\n", err)
		return 1
	}
	cfg, err := clusterFromFlags(*configFile, *natsURLs)
	if err != nil {
		return fs.Fail(err)
	}
	conn, err := cluster.Connect(cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := policykv.Push(ctx, conn, data, file)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: pushed as revision %d (%d rules, policy %q, digest %s)\n", file, p.Revision(), len(p.Rules()), p.Name(), p.Digest())
	return 0
}

// followPolicy makes the cluster's policy bucket the policy source of srv: the policy pushed
// last is put in force now, if there is one, and every later push as it comes, until ctx ends.
func (cs *clusterStores) followPolicy(ctx context.Context, srv *server.Server, log *slog.Logger) error {
	return policykv.Follow(ctx, cs.conn, srv.SetPolicy, true, log)
}

const auditExportUsage = `Usage: ahp-server audit export [flags] -dir DIR

Reads the cluster's audit stream and writes each replica's records to DIR/<replica>.jsonl, then
verifies each file's hash chain (as ahp-server audit verify FILE does). DIR must not hold those
files already.

Flags:
`

// runAuditExport is `ahp-server audit export`.
func runAuditExport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := cli.NewFlags("ahp-server audit export", stderr, getenv, auditExportUsage)
	natsURLs := fs.String("nats", "", "NATS server URLs, comma-separated", "AHP_NATS_URL")
	configFile := fs.String("config", "", "config file whose cluster: block says how to reach NATS", "AHP_CONFIG")
	dir := fs.String("dir", "", "directory to write one file per replica into (created if missing)", "")
	if status, ok := fs.Parse(args); !ok {
		return status
	}
	if *dir == "" || fs.NArg() > 0 {
		status := fs.Failf("want -dir DIR and no arguments")
		fs.Usage()
		return status
	}
	cfg, err := clusterFromFlags(*configFile, *natsURLs)
	if err != nil {
		return fs.Fail(err)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	conn, err := cluster.Connect(cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	files, err := auditstream.Export(ctx, conn, *dir)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server: audit export:", err)
		return 1
	}
	status := 0
	for _, f := range auditstream.SortedFiles(files) {
		fmt.Fprintf(stdout, "%s: %d records\n", f, files[f])
		if code := audit.VerifyCommand([]string{f}, stdout, stderr); code != 0 {
			status = code
		}
	}
	if len(files) == 0 {
		fmt.Fprintln(stdout, "the audit stream holds no records")
	}
	return status
}

// stats gathers the cluster metrics at scrape time; the bucket sizes cost one NATS request each,
// bounded by a second.
func (cs *clusterStores) stats() metrics.ClusterStats {
	st := cs.conn.Stats()
	out := metrics.ClusterStats{
		Connected: st.Connected, Degraded: st.Degraded, Failures: st.Failures, Timeouts: st.Timeouts, Checks: st.Checks,
		Reconnects: st.Reconnects, DegradedSeconds: st.DegradedSeconds,
		BucketEntries: map[string]uint64{}, BucketBytes: map[string]uint64{},
	}
	out.Failover.Skipped, out.Failover.SkippedConnected, out.Failover.SilentReconnects = st.Skipped, st.SkippedConnected, st.SilentReconnects
	if cs.idempotency != nil {
		w := cs.idempotency.WriteBack()
		f := &out.Failover
		f.WriteBackWritten, f.WriteBackConflicts, f.WriteBackDropped, f.WriteBackPendingBytes = w.Written, w.Conflicts, w.Dropped, w.PendingBytes
	}
	if cs.sessions != nil {
		s := cs.sessions.Stats()
		out.Sessions = metrics.SessionStoreStats{
			Watching: s.Watching, Reads: s.Reads, Writes: s.Writes, Coalesced: s.Coalesced, SyncWrites: s.SyncWrites,
			Conflicts: s.Conflicts, WriteFailures: s.Failures, Dropped: s.Dropped, TooLarge: s.TooLarge,
			LostAtClose: s.LostAtClose, Undecodable: s.Undecodable, QueueBytes: s.QueuedBytes, Cached: s.Cached,
		}
	}
	if cs.fanout != nil {
		f := cs.fanout.Stats()
		out.FanoutSent, out.FanoutReceived, out.FanoutDropped = f.Sent, f.Received, f.Dropped+f.Undecodable
		out.FanoutSentMessages, out.FanoutReceivedMessages = f.SentMessages, f.ReceivedMessages
		out.FanoutSubscribed, out.FanoutUnconfirmed, out.FanoutQueueBytes = f.Subscribed, f.Unconfirmed, f.QueuedBytes
	}
	if cs.audit != nil {
		a := cs.audit.Stats()
		out.AuditPublished, out.AuditFailed = a.Published, a.Failed
	}
	if st.Connected {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for _, b := range []string{idemkv.BucketName, sessionkv.BucketName, policykv.BucketName, approvalkv.BucketName} {
			if n, size, err := cs.conn.BucketSize(ctx, b); err == nil {
				out.BucketEntries[b], out.BucketBytes[b] = n, size
			}
		}
	}
	return out
}
