package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Conn is one replica's connection to NATS JetStream, shared by every cluster store. It
// reconnects on its own for as long as the process runs. Stores report each failed or late
// operation (Failed) and each success (Succeeded); Conn turns those into one log line when the
// degraded period starts and one when it ends, and into the counters metrics read.
type Conn struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	log *slog.Logger

	degraded      atomic.Bool
	degradedSince atomic.Int64 // unix nanoseconds; 0 while healthy
	degradedTotal atomic.Int64 // nanoseconds of ended degraded periods
	failures      atomic.Uint64
	mu            sync.Mutex // orders the start/end log lines
	closed        atomic.Bool
}

// Connect dials NATS with the settings of cfg (defaults filled in). With OnStartUnavailable
// "refuse" an unreachable NATS is an error; with "degrade" Connect returns a Conn that keeps trying
// in the background and reports itself degraded until it connects.
func Connect(cfg Config, log *slog.Logger) (*Conn, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	c := &Conn{cfg: cfg, log: log}
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(strings.Join(cfg.Servers, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connecting to NATS (%s): %w", redactURLs(cfg.Servers), err)
	}
	c.nc = nc
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncTimeout(10*time.Second),
		jetstream.WithPublishAsyncMaxPending(8192),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			c.Failed(fmt.Errorf("an asynchronous publish was not acknowledged: %w", err))
		}))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("cluster: JetStream: %w", err)
	}
	c.js = js
	if !nc.IsConnected() {
		c.Failed(errors.New("NATS not reachable at start"))
	}
	return c, nil
}

func (c *Conn) options() ([]nats.Option, error) {
	cfg := c.cfg
	opts := []nats.Option{
		nats.Name("ahp-server/" + cfg.Name),
		// This replica never needs its own core messages back (the Watch fan-out would only
		// drop them): NATS does not send them, which saves both sides the work.
		nats.NoEcho(),
		nats.Timeout(cfg.ConnectTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.ReconnectBufSize(8 << 20),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if !c.closed.Load() { // our own Close is no outage
				c.Failed(fmt.Errorf("NATS connection lost: %v", err))
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.log.Info("cluster: reconnected to NATS", "server", nc.ConnectedUrlRedacted())
			c.Succeeded()
		}),
		nats.ConnectHandler(func(nc *nats.Conn) {
			c.log.Info("cluster: connected to NATS", "server", nc.ConnectedUrlRedacted())
			c.Succeeded()
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			c.log.Warn("cluster: NATS error", "error", err)
		}),
	}
	if cfg.OnStartUnavailable == Degrade {
		opts = append(opts, nats.RetryOnFailedConnect(true))
	}
	switch {
	case cfg.CredsFile != "":
		if _, err := os.Stat(cfg.CredsFile); err != nil {
			return nil, fmt.Errorf("cluster.creds_file: %w", err)
		}
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	case cfg.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(cfg.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("cluster.nkey_file: cannot read an nkey seed from the file: %w", errors.Unwrap(err))
		}
		opts = append(opts, o)
	case cfg.TokenEnv != "":
		tok := os.Getenv(cfg.TokenEnv)
		if tok == "" {
			return nil, fmt.Errorf("cluster.token_env: environment variable %s is empty or unset", cfg.TokenEnv)
		}
		opts = append(opts, nats.Token(tok))
	}
	if cfg.TLS.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.TLS.CAFile))
	}
	if cfg.TLS.CertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.TLS.CertFile, cfg.TLS.KeyFile))
	}
	return opts, nil
}

// redactURLs shows the servers without any user information.
func redactURLs(servers []string) string {
	out := make([]string, len(servers))
	for i, s := range servers {
		if at := strings.LastIndex(s, "@"); at >= 0 {
			scheme := ""
			if i := strings.Index(s, "://"); i >= 0 && i < at {
				scheme = s[:i+3]
			}
			s = scheme + "[redacted]@" + s[at+1:]
		}
		out[i] = s
	}
	return strings.Join(out, ",")
}

// Config returns the settings in force (defaults filled in).
func (c *Conn) Config() Config { return c.cfg }

// NATS returns the core NATS connection (pub/sub).
func (c *Conn) NATS() *nats.Conn { return c.nc }

// JetStream returns the JetStream context (streams and KV buckets).
func (c *Conn) JetStream() jetstream.JetStream { return c.js }

// Name is this replica's name.
func (c *Conn) Name() string { return c.cfg.Name }

// Bucket names a KV bucket or stream of this installation: prefix + "_" + what.
func (c *Conn) Bucket(what string) string { return c.cfg.Prefix + "_" + what }

// Subject names a subject of this installation: prefix + "." + what.
func (c *Conn) Subject(what string) string { return c.cfg.Prefix + "." + what }

// Budget returns a context bounded by the lookup budget, for one store operation on the decision
// path.
func (c *Conn) Budget(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.LookupBudget)
}

// ErrNotConnected is what a store reports when it did not try NATS because the connection is
// down: decisions then do not wait out the lookup budget while NATS reconnects.
var ErrNotConnected = errors.New("NATS not connected")

// Usable reports whether a store should try NATS now; when not, it records the failure, and the
// store uses its local fallback at once.
func (c *Conn) Usable() bool {
	if c.nc.IsConnected() {
		return true
	}
	c.Failed(ErrNotConnected)
	return false
}

// Ready reports whether NATS is reachable: nil when connected and no store operation failed
// since the last success.
func (c *Conn) Ready() error {
	if !c.nc.IsConnected() {
		return errors.New("NATS not connected")
	}
	if c.degraded.Load() {
		return errors.New("cluster store degraded: the last NATS operation failed")
	}
	return nil
}

// Unavailable returns a reason when decisions must fail closed: on_unavailable is fail-closed
// and NATS is not usable. It returns "" otherwise, in degrade mode always.
func (c *Conn) Unavailable() string {
	if c.cfg.OnUnavailable != FailClosed {
		return ""
	}
	if !c.nc.IsConnected() {
		return "cluster store unavailable (NATS not connected); failing closed"
	}
	return ""
}

// FailClosed reports whether on_unavailable is fail-closed.
func (c *Conn) FailClosed() bool { return c.cfg.OnUnavailable == FailClosed }

// Failed records a failed or late store operation: the first one after a success starts a
// degraded period, logged once.
func (c *Conn) Failed(err error) {
	c.failures.Add(1)
	if c.degraded.Load() || c.closed.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.degraded.Swap(true) {
		return
	}
	c.degradedSince.Store(time.Now().UnixNano())
	action := "deciding with local stores until it returns"
	if c.FailClosed() {
		action = "failing closed until it returns"
	}
	c.log.Error("cluster: NATS unavailable; "+action, "error", err, "on_unavailable", c.cfg.OnUnavailable)
}

// Succeeded records a successful store operation: it ends a degraded period, logged once.
func (c *Conn) Succeeded() {
	if !c.degraded.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.degraded.Swap(false) {
		return
	}
	since := c.degradedSince.Swap(0)
	took := time.Duration(time.Now().UnixNano() - since)
	c.degradedTotal.Add(int64(took))
	c.log.Info("cluster: NATS available again; shared stores back in use", "degraded_for", took.Round(time.Millisecond).String())
}

// Stats are counters for metrics.
type Stats struct {
	// Connected reports the NATS connection.
	Connected bool
	// Degraded reports a degraded period in progress.
	Degraded bool
	// Failures counts failed or late store operations.
	Failures uint64
	// DegradedSeconds is the total time spent degraded, the current period included.
	DegradedSeconds float64
	// Reconnects counts reconnections.
	Reconnects uint64
}

// Stats returns the current counters.
func (c *Conn) Stats() Stats {
	total := time.Duration(c.degradedTotal.Load())
	if since := c.degradedSince.Load(); since != 0 {
		total += time.Duration(time.Now().UnixNano() - since)
	}
	return Stats{
		Connected:       c.nc.IsConnected(),
		Degraded:        c.degraded.Load(),
		Failures:        c.failures.Load(),
		DegradedSeconds: total.Seconds(),
		Reconnects:      c.nc.Stats().Reconnects,
	}
}

// Close flushes what was published (for up to a second) and closes the connection.
func (c *Conn) Close() {
	if c.nc == nil || c.closed.Swap(true) {
		return
	}
	_ = c.nc.FlushTimeout(time.Second)
	c.nc.Close()
}

// setupAttempt bounds one try at creating or updating a bucket or stream. Replicas starting
// together race to create the same replicated stream, and on a JetStream cluster a request that
// loses that race can go unanswered; trying again soon finds the stream made by the winner.
const setupAttempt = 2 * time.Second

// KeyValue creates the bucket cfg describes, or updates it to cfg, retrying unanswered attempts
// until ctx ends.
func (c *Conn) KeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	return retrySetup(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		return c.js.CreateOrUpdateKeyValue(ctx, cfg)
	})
}

// Stream creates the stream cfg describes, or updates it to cfg, retrying like KeyValue.
func (c *Conn) Stream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	return retrySetup(ctx, func(ctx context.Context) (jetstream.Stream, error) {
		return c.js.CreateOrUpdateStream(ctx, cfg)
	})
}

func retrySetup[T any](ctx context.Context, try func(context.Context) (T, error)) (T, error) {
	for {
		attempt, cancel := context.WithTimeout(ctx, setupAttempt)
		v, err := try(attempt)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
			return v, err
		}
	}
}

// BucketSize reads the entries and bytes of this installation's KV bucket what (for metrics).
func (c *Conn) BucketSize(ctx context.Context, what string) (entries, bytes uint64, err error) {
	kv, err := c.js.KeyValue(ctx, c.Bucket(what))
	if err != nil {
		return 0, 0, err
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return 0, 0, err
	}
	return st.Values(), st.Bytes(), nil
}
