// Package policykv distributes the policy of a cluster through a NATS JetStream key-value
// bucket: `ahp-server policy push FILE` checks the policy and stores its source under one key;
// every replica (and every bridge in embedded mode given --nats) watches that key, compiles each
// new revision and switches to it atomically. A value that does not compile is logged once and
// ignored: the policy in force stays. The bucket keeps a short history, so an operator can see
// (and restore) what was pushed before.
package policykv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/nats-io/nats.go/jetstream"
)

// BucketName is the bucket's name without the installation prefix; Key is the policy's key.
const (
	BucketName = "policy"
	Key        = "current"
)

// maxPolicyBytes bounds a pushed policy.
const maxPolicyBytes = 4 << 20

// Open creates or updates the bucket.
func Open(ctx context.Context, conn *cluster.Conn) (jetstream.KeyValue, error) {
	kv, err := conn.KeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:       conn.Bucket(BucketName),
		Description:  "ahp-server: the cluster's policy (YAML source), one key, with history",
		MaxValueSize: maxPolicyBytes,
		History:      16,
		Storage:      jetstream.FileStorage,
		Replicas:     conn.Config().Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: policy bucket %s: %w", conn.Bucket(BucketName), err)
	}
	return kv, nil
}

// Push checks data as a policy and, if it compiles, stores it as the cluster's policy. It
// returns the compiled policy at its new revision. A broken policy is refused before anything is
// stored.
func Push(ctx context.Context, conn *cluster.Conn, data []byte, name string) (*policy.Policy, error) {
	if len(data) > maxPolicyBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a pushed policy may have", name, len(data), maxPolicyBytes)
	}
	p, err := policy.Parse(data, name)
	if err != nil {
		return nil, err
	}
	kv, err := Open(ctx, conn)
	if err != nil {
		return nil, err
	}
	rev, err := kv.Put(ctx, Key, data)
	if err != nil {
		return nil, fmt.Errorf("storing the policy in %s: %w", conn.Bucket(BucketName), err)
	}
	return p.WithRevision(rev), nil
}

func compile(e jetstream.KeyValueEntry) (*policy.Policy, error) {
	p, err := policy.Parse(e.Value(), fmt.Sprintf("cluster policy revision %d", e.Revision()))
	if err != nil {
		return nil, err
	}
	return p.WithRevision(e.Revision()), nil
}

// Watcher follows the bucket and hands every policy revision that compiles to apply.
type Watcher struct {
	conn  *cluster.Conn
	kv    jetstream.KeyValue
	apply func(*policy.Policy)
	log   *slog.Logger

	mu      sync.Mutex
	applied uint64 // last revision applied or refused
}

// NewWatcher returns a watcher of the bucket in kv, opened on conn; apply is called (from one
// goroutine at a time) with each new policy.
func NewWatcher(conn *cluster.Conn, kv jetstream.KeyValue, apply func(*policy.Policy), log *slog.Logger) *Watcher {
	if log == nil {
		log = slog.Default()
	}
	return &Watcher{conn: conn, kv: kv, apply: apply, log: log}
}

// Load applies the policy in the bucket now, if one was pushed and compiles (a broken one is
// logged, once, and skipped). found reports whether the bucket held a policy.
func (w *Watcher) Load(ctx context.Context) (found bool, err error) {
	e, err := w.kv.Get(ctx, Key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	w.handle(e)
	return true, nil
}

// Run watches until ctx ends. The current value is delivered first, then every update; after a
// reconnect (NATS restarting) the watch resumes after the last revision seen (cluster.WatchKV),
// so a push made meanwhile still arrives.
func (w *Watcher) Run(ctx context.Context) error {
	kw, err := cluster.WatchKV(ctx, w.conn, w.kv, Key, w.conn.Bucket(BucketName),
		func(e jetstream.KeyValueEntry, _ bool) { w.handle(e) }, w.log)
	if err != nil {
		return err
	}
	<-ctx.Done()
	kw.Close()
	return nil
}

// handle applies one entry, or logs once why it cannot.
func (w *Watcher) handle(e jetstream.KeyValueEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e.Revision() <= w.applied {
		return
	}
	w.applied = e.Revision()
	if e.Operation() != jetstream.KeyValuePut {
		w.log.Warn("cluster policy deleted from the bucket; the policy in force stays", "revision", e.Revision())
		return
	}
	p, err := compile(e)
	if err != nil {
		w.log.Error("cluster policy does not compile; ignored, the policy in force stays", "revision", e.Revision(), "error", err)
		return
	}
	w.apply(p)
}

// Follow makes the cluster's policy bucket the policy source of a process: the policy pushed
// last is handed to apply now, if there is one (a bucket that cannot be read at start is logged
// and the local policy stays), and, with watch, every later push as it comes, until ctx ends.
// ahp-server replicas and bridges in embedded mode both follow the bucket through it. With
// on_start_unavailable degrade and the bucket not available (NATS not reachable yet), it returns
// at once: the local policy stays in force, and the bucket is opened, read and watched in the
// background when NATS comes.
func Follow(ctx context.Context, conn *cluster.Conn, apply func(*policy.Policy), watch bool, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	if conn.DegradeAtStart() && !conn.NATS().IsConnected() {
		conn.Attach(ctx.Done(), "policy bucket "+conn.Bucket(BucketName), cluster.ErrNotConnected, func(actx context.Context) error {
			return follow(ctx, actx, conn, apply, watch, log)
		})
		return nil
	}
	setupCtx, cancel := context.WithTimeout(ctx, conn.Config().SetupTimeout)
	defer cancel()
	err := follow(ctx, setupCtx, conn, apply, watch, log)
	if err != nil && conn.DegradeAtStart() && ctx.Err() == nil {
		conn.Attach(ctx.Done(), "policy bucket "+conn.Bucket(BucketName), err, func(actx context.Context) error {
			return follow(ctx, actx, conn, apply, watch, log)
		})
		return nil
	}
	return err
}

// follow opens the bucket and applies its policy within setupCtx and, with watch, watches it
// until ctx ends.
func follow(ctx, setupCtx context.Context, conn *cluster.Conn, apply func(*policy.Policy), watch bool, log *slog.Logger) error {
	kv, err := Open(setupCtx, conn)
	if err != nil {
		return err
	}
	w := NewWatcher(conn, kv, apply, log)
	switch found, err := w.Load(setupCtx); {
	case err != nil:
		log.Warn("cluster policy not readable at start; the local policy is in force until it is", "error", err)
	case !found:
		log.Info("no cluster policy pushed yet; the local policy is in force until `ahp-server policy push`")
	}
	if watch {
		go func() {
			if err := w.Run(ctx); err != nil {
				log.Error("cluster policy watch stopped; the policy in force stays", "error", err)
			}
		}()
	}
	return nil
}
