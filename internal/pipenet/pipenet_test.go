package pipenet_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/ahp-gateway/ahp/internal/pipenet"
)

func TestDialReachesAccept(t *testing.T) {
	t.Parallel()
	ln := pipenet.Listen("here")
	defer ln.Close()
	if got := ln.Addr().String(); got != "here" {
		t.Errorf("Addr = %q, want here", got)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Errorf("Accept: %v", err)
		}
		accepted <- c
	}()
	client, err := ln.Dial(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		t.FailNow()
	}
	defer server.Close()
	go func() { _, _ = client.Write([]byte("hi")) }()
	buf := make([]byte, 2)
	if _, err := io.ReadFull(server, buf); err != nil || string(buf) != "hi" {
		t.Errorf("server read %q, %v; want hi", buf, err)
	}
}

func TestCloseEndsAcceptAndDial(t *testing.T) {
	t.Parallel()
	errGone := errors.New("gone")
	for _, c := range []struct {
		name string
		ln   *pipenet.Listener
		want error
	}{
		{"default", pipenet.Listen("x"), net.ErrClosed},
		{"ClosedError", pipenet.Listen("x", pipenet.ClosedError(errGone)), errGone},
	} {
		if err := c.ln.Close(); err != nil {
			t.Fatalf("%s: Close: %v", c.name, err)
		}
		if err := c.ln.Close(); err != nil {
			t.Errorf("%s: second Close: %v", c.name, err)
		}
		if _, err := c.ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("%s: Accept after Close = %v, want net.ErrClosed", c.name, err)
		}
		if _, err := c.ln.Dial(context.Background(), "", ""); !errors.Is(err, c.want) {
			t.Errorf("%s: Dial after Close = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestDialHonoursTheContext(t *testing.T) {
	t.Parallel()
	ln := pipenet.Listen("x") // nobody accepts
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ln.Dial(ctx, "", ""); err != context.Canceled {
		t.Errorf("Dial with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestStartOnFirstDial(t *testing.T) {
	t.Parallel()
	t.Run("starts once", func(t *testing.T) {
		t.Parallel()
		starts := 0
		var ln *pipenet.Listener
		ln = pipenet.Listen("x", pipenet.StartOnFirstDial(func() error {
			starts++
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
			return nil
		}))
		defer ln.Close()
		for range 2 {
			c, err := ln.Dial(context.Background(), "", "")
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
		}
		if starts != 1 {
			t.Errorf("start ran %d times, want 1", starts)
		}
	})
	t.Run("failure", func(t *testing.T) {
		t.Parallel()
		errStart, errGone := errors.New("no start"), errors.New("gone")
		ln := pipenet.Listen("x", pipenet.StartOnFirstDial(func() error { return errStart }), pipenet.ClosedError(errGone))
		for range 2 {
			_, err := ln.Dial(context.Background(), "", "")
			if !errors.Is(err, errStart) {
				t.Errorf("Dial = %v, want the start error", err)
			}
			if !errors.Is(err, errGone) {
				t.Errorf("Dial = %v, want the closed error", err)
			}
		}
	})
}
