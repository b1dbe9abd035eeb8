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
// operation (Failed) and each success (Succeeded); the operation that failed uses its local
// fallback, counted. Whether the cluster is degraded follows the connection's real state, not
// single operations: a lost connection degrades it at once; a failure while connected (a lookup
// over its budget under load, say) makes Conn check, off the decision path, that JetStream
// answers, and only when it does not is the cluster degraded. A degraded period ends when a check
// succeeds after the connection is back. Conn logs the start and the end of a degraded period
// once each, and keeps the counters metrics read.
//
// A check also finds a silent link: the connection says it is connected, but the TCP link to
// its server carries nothing (a partition, a node gone behind a load balancer; no reset ever
// comes). Each check first sends a PING; when no PONG comes within checkTimeout and no store
// operation succeeded meanwhile, Conn drops the link and reconnects to another known server
// (the cluster's servers are learnt from the first one's INFO), and decisions use their local
// fallbacks until it has. With no traffic at all, the client's own pings (cluster.ping_interval,
// two outstanding at most) find the link within three intervals.
//
// A check passes when anything answers: JetStream's account information (the meta leader), the
// probe a store registered (see Probe), or a store operation that succeeded while the check ran.
// While connected and degraded, one store operation per checkInterval is let through as a trial
// (Usable), so that a JetStream whose meta leader is being elected, but whose streams answer,
// ends the degraded period at the first trial that succeeds.
type Conn struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	log *slog.Logger

	degraded      atomic.Bool
	degradedSince atomic.Int64 // unix nanoseconds; 0 while healthy
	degradedTotal atomic.Int64 // nanoseconds of ended degraded periods
	failures      atomic.Uint64
	timeouts      atomic.Uint64
	checks        atomic.Uint64
	successes     atomic.Uint64                               // successful store operations (a check passes when it grows)
	skipped       atomic.Uint64                               // operations not tried: not connected, or degraded
	skippedUp     atomic.Uint64                               // the part of skipped while connected (degraded by checks)
	silent        atomic.Uint64                               // reconnects forced because the link went silent
	lastTrial     atomic.Int64                                // unix nanoseconds of the last trial let through while degraded
	lastCheck     atomic.Int64                                // unix nanoseconds of the last check started
	probe         atomic.Pointer[func(context.Context) error] // see Probe
	availMu       sync.Mutex
	available     []func() // see WhenAvailable
	checkMu       sync.Mutex
	checking      bool       // a check goroutine runs
	checkFailure  bool       // the running check was started by a failure
	nextCause     error      // the failure that asked for the next check
	recheck       bool       // a connect (or, during a connect's check, a failure) came while it ran: it checks once more
	mu            sync.Mutex // orders the start/end log lines
	closed        atomic.Bool
	latency       atomic.Pointer[func(store, op string, d time.Duration)] // see ObserveLatency
	jsSet         chan struct{}                                           // closed once Connect set nc and js (or failed)
	done          chan struct{}                                           // closed by Close
}

// checkTimeout bounds one check that JetStream answers (off the decision path).
const checkTimeout = time.Second

// checkInterval is the least time between two checks started by failed operations, the time
// between two checks while degraded, and the time between two trial operations while connected
// and degraded.
const checkInterval = 250 * time.Millisecond

// maxPingsOut is how many pings may go unanswered before the client drops the link.
const maxPingsOut = 2

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
	c := &Conn{cfg: cfg, log: log, done: make(chan struct{}), jsSet: make(chan struct{})}
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	defer close(c.jsSet)
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
		c.failures.Add(1)
		c.degrade(errors.New("NATS not reachable at start"))
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
		// A silent link is found by pings when nothing else flows: two unanswered pings, a
		// reconnect at the third interval. A write the link has not taken within that window
		// (at least a second, at most the default minute) ends it too.
		nats.PingInterval(cfg.PingInterval),
		nats.MaxPingsOutstanding(maxPingsOut),
		nats.FlusherTimeout(min(max(time.Duration(maxPingsOut+1)*cfg.PingInterval, time.Second), nats.DefaultFlusherTimeout)),
		// A server going away gracefully (lame duck mode, as a NATS pod being stopped) says so:
		// move to another server now instead of waiting until it closes this connection.
		nats.LameDuckModeHandler(func(nc *nats.Conn) {
			c.log.Info("cluster: NATS server entering lame duck mode; moving to another server", "server", nc.ConnectedUrlRedacted())
			_ = nc.ForceReconnect()
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if !c.closed.Load() { // our own Close is no outage
				if err == nil { // a reconnect this Conn forced (silent link, lame duck server)
					err = errors.New("closed to move to another server")
				}
				c.failures.Add(1)
				c.degrade(fmt.Errorf("NATS connection lost: %v", err))
			}
		}),
		// Connected again: the degraded period ends once JetStream answers.
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.log.Info("cluster: reconnected to NATS", "server", nc.ConnectedUrlRedacted())
			c.check(nil, true)
		}),
		nats.ConnectHandler(func(nc *nats.Conn) {
			c.log.Info("cluster: connected to NATS", "server", nc.ConnectedUrlRedacted())
			c.check(nil, true)
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

// Logger is the logger Conn logs with, for the stores on it.
func (c *Conn) Logger() *slog.Logger { return c.log }

// Config returns the settings in force (defaults filled in).
func (c *Conn) Config() Config { return c.cfg }

// ObserveLatency makes Took report each timed store operation to f (a metrics histogram); f must
// be cheap and safe for concurrent use.
func (c *Conn) ObserveLatency(f func(store, op string, d time.Duration)) {
	if f != nil {
		c.latency.Store(&f)
	}
}

// Took reports a store operation of store (idempotency, sessions, audit) and op that started at
// start, answered or not, to the function given to ObserveLatency, if any.
func (c *Conn) Took(store, op string, start time.Time) {
	if f := c.latency.Load(); f != nil {
		(*f)(store, op, time.Since(start))
	}
}

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

// Probe registers a cheap request to a shared store that checks use beside JetStream's account
// information, which only the JetStream meta leader answers: a request the store's stream
// leader answers (its status, say) tells a store that can be written to from a cluster that
// is only electing its meta leader. It reports nil when the store answered.
func (c *Conn) Probe(f func(ctx context.Context) error) {
	if f != nil {
		c.probe.Store(&f)
	}
}

// WhenAvailable makes f run (in a goroutine of its own) each time a degraded period ends: a store
// that kept something locally meanwhile writes it to NATS then.
func (c *Conn) WhenAvailable(f func()) {
	c.availMu.Lock()
	defer c.availMu.Unlock()
	c.available = append(c.available, f)
}

// ErrNotConnected is what a store reports when it did not try NATS because the connection is
// down: decisions then do not wait out the lookup budget while NATS reconnects.
var ErrNotConnected = errors.New("NATS not connected")

// ErrDegraded is what a store reports when it did not try NATS because the connection is up but
// the last checks found nothing answering.
var ErrDegraded = errors.New("cluster store degraded")

// Usable reports whether a store should try NATS now: connected and not degraded, or connected,
// degraded and this operation is the period's next trial (one per checkInterval; its success ends
// the period). When not, it counts the operation as failed and skipped, and the store uses its
// local fallback at once.
func (c *Conn) Usable() bool {
	if !c.connected() {
		c.skipped.Add(1)
		c.Failed(ErrNotConnected)
		return false
	}
	if !c.degraded.Load() {
		return true
	}
	now := time.Now().UnixNano()
	if last := c.lastTrial.Load(); now-last >= int64(checkInterval) && c.lastTrial.CompareAndSwap(last, now) {
		return true
	}
	c.skipped.Add(1)
	c.skippedUp.Add(1)
	c.Failed(ErrDegraded)
	return false
}

func (c *Conn) connected() bool { return c.nc != nil && c.nc.IsConnected() }

// Ready reports whether NATS is reachable: nil when connected and no store operation failed
// since the last success.
func (c *Conn) Ready() error {
	if !c.connected() {
		return errors.New("NATS not connected")
	}
	if c.degraded.Load() {
		return errors.New("cluster store degraded: JetStream does not answer")
	}
	return nil
}

// Unavailable returns a reason when decisions must fail closed: on_unavailable is fail-closed
// and NATS is not usable. It returns "" otherwise, in degrade mode always.
func (c *Conn) Unavailable() string {
	if c.cfg.OnUnavailable != FailClosed {
		return ""
	}
	if !c.connected() {
		return "cluster store unavailable (NATS not connected); failing closed"
	}
	if c.degraded.Load() {
		return "cluster store unavailable (JetStream not answering); failing closed"
	}
	return ""
}

// FailClosed reports whether on_unavailable is fail-closed.
func (c *Conn) FailClosed() bool { return c.cfg.OnUnavailable == FailClosed }

// Failed records a failed or late store operation (the caller uses its local fallback for it).
// With the connection down it starts a degraded period, logged once; with the connection up it
// starts a check that JetStream answers (at most one at a time, and one per checkInterval),
// which starts a degraded period only when JetStream does not answer within a second.
func (c *Conn) Failed(err error) {
	c.failures.Add(1)
	if errors.Is(err, context.DeadlineExceeded) {
		c.timeouts.Add(1)
	}
	if c.degraded.Load() || c.closed.Load() {
		return
	}
	if !c.connected() {
		c.degrade(err)
		return
	}
	c.check(err, false)
}

// check starts, unless one is running (or, with always false, one started less than
// checkInterval ago), a goroutine that asks JetStream for its account information. An answer ends
// a degraded period; no answer starts one, and the goroutine asks again every checkInterval while
// connected and degraded. cause is the failure that prompted the check (nil after a connect).
func (c *Conn) check(cause error, always bool) {
	now := time.Now().UnixNano()
	if !always && now-c.lastCheck.Load() < int64(checkInterval) {
		return
	}
	c.checkMu.Lock()
	if c.checking {
		c.recheck = c.recheck || always || !c.checkFailure
		c.checkFailure = c.checkFailure || cause != nil
		if c.recheck && c.nextCause == nil {
			c.nextCause = cause
		}
		c.checkMu.Unlock()
		return
	}
	c.checking, c.checkFailure = true, cause != nil
	c.checkMu.Unlock()
	if !always {
		c.lastCheck.Store(now)
	}
	go func() {
		select {
		case <-c.jsSet:
		case <-c.done:
		}
		for {
			again, next := c.checkOnce(cause)
			if !again {
				return
			}
			cause = next
		}
	}()
}

// checkOnce runs one check, and further ones every checkInterval while connected and JetStream
// does not answer; it reports whether a connect (or failure) during the check asks for one more,
// and the failure that did.
func (c *Conn) checkOnce(cause error) (again bool, next error) {
	defer func() {
		c.checkMu.Lock()
		again, c.recheck = c.recheck && !c.closed.Load(), false
		next, c.nextCause = c.nextCause, nil
		c.checking, c.checkFailure = again, false
		c.checkMu.Unlock()
	}()
	if c.js == nil { // Connect failed
		return
	}
	for {
		seq := c.successes.Load()
		err := c.answers(seq)
		c.checks.Add(1)
		if c.closed.Load() {
			return
		}
		if err == nil || c.successes.Load() != seq {
			if c.degraded.Load() {
				c.Succeeded()
			} else if cause != nil {
				c.log.Debug("cluster: a store operation failed, but JetStream answers: not degraded", "error", cause)
			}
			return
		}
		c.log.Debug("cluster: check: JetStream did not answer", "error", err)
		if !c.connected() {
			return // the connection is lost (degraded by then); its reconnect checks again
		}
		if errors.Is(err, errSilent) {
			if cause != nil {
				err = fmt.Errorf("%v; %w", cause, err)
			}
			c.degrade(err)
			c.silent.Add(1)
			c.log.Warn("cluster: NATS link silent (no answer to a ping); reconnecting to another server", "server", c.nc.ConnectedUrlRedacted())
			if rerr := c.nc.ForceReconnect(); rerr != nil {
				c.log.Warn("cluster: forcing a reconnect failed", "error", rerr)
			}
			return // the reconnect checks again
		}
		if cause == nil {
			cause = errors.New("connected, but JetStream did not answer")
		}
		c.degrade(fmt.Errorf("%v; JetStream does not answer: %w", cause, err))
		select {
		case <-c.done:
			return
		case <-time.After(checkInterval):
		}
	}
}

// errSilent is what answers reports for a link that took a ping and gave no pong back.
var errSilent = errors.New("no answer to a ping: the link is silent")

// answers checks, off the decision path, that NATS answers on this connection: a ping first (no
// pong, and no store operation succeeding since seq, means the link is silent), then the store
// probe, if any, then JetStream's account information. nil means something answered.
func (c *Conn) answers(seq uint64) error {
	if err := c.nc.FlushTimeout(checkTimeout); err != nil {
		if errors.Is(err, nats.ErrTimeout) && c.connected() && c.successes.Load() == seq {
			return fmt.Errorf("%w (%v)", errSilent, err)
		}
		return err
	}
	if p := c.probe.Load(); p != nil {
		ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
		err := (*p)(ctx)
		cancel()
		if err == nil || c.successes.Load() != seq {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	_, err := c.js.AccountInfo(ctx)
	return err
}

// degrade starts a degraded period, logged once.
func (c *Conn) degrade(err error) {
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

// Succeeded records a successful store operation: it ends a degraded period (connected again),
// logged once.
func (c *Conn) Succeeded() {
	c.successes.Add(1)
	if !c.degraded.Load() || !c.connected() {
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
	c.availMu.Lock()
	for _, f := range c.available {
		go f()
	}
	c.availMu.Unlock()
}

// Stats are counters for metrics.
type Stats struct {
	// Connected reports the NATS connection.
	Connected bool
	// Degraded reports a degraded period in progress.
	Degraded bool
	// Failures counts store operations that used the local fallback: failed, late, or not
	// tried because NATS was not usable.
	Failures uint64
	// Timeouts counts the operations among them that ran out of the lookup budget.
	Timeouts uint64
	// Checks counts the checks that JetStream answers (after failures and reconnects).
	Checks uint64
	// DegradedSeconds is the total time spent degraded, the current period included.
	DegradedSeconds float64
	// Reconnects counts reconnections.
	Reconnects uint64
	// Skipped counts the failures that were not tried at all (not connected, or degraded);
	// SkippedConnected the part of them while connected (degraded because checks found nothing
	// answering, trials aside).
	Skipped, SkippedConnected uint64
	// SilentReconnects counts reconnects forced because the link went silent (a ping without
	// a pong and no store operation succeeding).
	SilentReconnects uint64
}

// Stats returns the current counters.
func (c *Conn) Stats() Stats {
	total := time.Duration(c.degradedTotal.Load())
	if since := c.degradedSince.Load(); since != 0 {
		total += time.Duration(time.Now().UnixNano() - since)
	}
	return Stats{
		Connected:        c.connected(),
		Degraded:         c.degraded.Load(),
		Failures:         c.failures.Load(),
		Timeouts:         c.timeouts.Load(),
		Checks:           c.checks.Load(),
		DegradedSeconds:  total.Seconds(),
		Reconnects:       c.nc.Stats().Reconnects,
		Skipped:          c.skipped.Load(),
		SkippedConnected: c.skippedUp.Load(),
		SilentReconnects: c.silent.Load(),
	}
}

// Close flushes what was published (for up to a second) and closes the connection.
func (c *Conn) Close() {
	if c.nc == nil || c.closed.Swap(true) {
		return
	}
	close(c.done)
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
