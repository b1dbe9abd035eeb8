package bench

import (
	"context"
	"fmt"
	"sync"
)

// correlator matches answers to the requests waiting for them, by id.
type correlator[T any] struct {
	mu      sync.Mutex
	waiting map[string]chan T
	err     error // set once the answer source is gone
}

func newCorrelator[T any]() *correlator[T] {
	return &correlator[T]{waiting: make(map[string]chan T)}
}

// expect registers id before its request is sent and returns the function that waits for the
// answer.
func (c *correlator[T]) expect(id string) (func(context.Context) (T, error), error) {
	ch := make(chan T, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	if _, dup := c.waiting[id]; dup {
		return nil, fmt.Errorf("request id %q already waiting", id)
	}
	c.waiting[id] = ch
	return func(ctx context.Context) (T, error) {
		select {
		case v, ok := <-ch:
			if !ok {
				var zero T
				c.mu.Lock()
				err := c.err
				c.mu.Unlock()
				return zero, err
			}
			return v, nil
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}, nil
}

// deliver hands v to whoever waits for id; it reports false for an answer nobody waits for.
func (c *correlator[T]) deliver(id string, v T) bool {
	c.mu.Lock()
	ch, ok := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if ok {
		ch <- v
	}
	return ok
}

// forget drops a request that will not wait any longer.
func (c *correlator[T]) forget(id string) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}

// fail ends every wait, now and later, with err.
func (c *correlator[T]) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
}
