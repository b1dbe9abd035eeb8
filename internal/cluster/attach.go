package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// AttachTimeout bounds one background attempt at opening a bucket or stream (and starting its
// watch).
const AttachTimeout = 10 * time.Second

// DegradeAtStart reports whether a store whose bucket or stream cannot be opened now should
// start on its local fallback and attach in the background (on_start_unavailable: degrade).
func (c *Conn) DegradeAtStart() bool { return c.cfg.OnStartUnavailable == Degrade }

// Attach runs open in the background until it succeeds, stop is closed or the connection is
// closed: at once when connected, again on every (re)connect, and while connected with a backoff
// of 100 ms doubling to 5 s. Each attempt is bounded by AttachTimeout. It is what a store does
// when it started degraded (on_start_unavailable: degrade): it serves from its local fallback
// until open succeeds, and from the shared bucket or stream after. The returned channel is
// closed when the goroutine ends (opened, or stopped). what names the store in the log: the
// start of the wait is logged once (Warn, with cause: why it is not available now), the
// attachment once (Info).
func (c *Conn) Attach(stop <-chan struct{}, what string, cause error, open func(ctx context.Context) error) <-chan struct{} {
	ended := make(chan struct{})
	c.log.Warn("cluster: "+what+" not available at start; using the local fallback until it is (retrying in the background)", "error", cause)
	go func() {
		defer close(ended)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-stop:
			case <-c.done:
			case <-ended:
			}
			cancel()
		}()
		nc := c.nc
		connected := nc.StatusChanged(nats.CONNECTED)
		defer nc.RemoveStatusListener(connected)
		backoff := 100 * time.Millisecond
		for attempt := 0; ; {
			if nc.IsConnected() {
				attempt++
				actx, acancel := context.WithTimeout(ctx, AttachTimeout)
				err := open(actx)
				acancel()
				if err == nil {
					c.log.Info("cluster: "+what+" attached; shared from now on", "attempts", attempt)
					return
				}
				if ctx.Err() != nil {
					return
				}
				c.log.Debug("cluster: attaching "+what+" failed; retrying", "error", err, "retry_in", backoff)
			}
			select {
			case <-ctx.Done():
				return
			case <-connected:
				backoff = 100 * time.Millisecond
			case <-time.After(backoff):
				backoff = min(2*backoff, 5*time.Second)
			}
		}
	}()
	return ended
}

// ErrNotAttached is what a store reports for a call it answered locally because its bucket or
// stream is not open yet (started degraded, attaching in the background).
var ErrNotAttached = errors.New("cluster store not attached yet")
