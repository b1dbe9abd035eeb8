// Package notify tells people about new approvals: a generic JSON webhook (signed with
// HMAC-SHA256) and the Slack incoming-webhook format. Delivery runs off the decision path from a
// queue bounded in entries and bytes, with bounded retries and backoff; a failure is counted and
// logged, never a reason to allow anything. Payloads carry only redacted text (Options.Redact
// runs over every free-text field; the input summary arrives redacted).
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
)

// Kinds of notifier.
const (
	// KindWebhook posts the JSON body of Payload, signed in SignatureHeader when a secret is set.
	KindWebhook = "webhook"
	// KindSlack posts a Slack incoming-webhook message ({"text": …, "blocks": …}).
	KindSlack = "slack"
)

// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">" on webhook
// requests, when the notifier has a secret.
const SignatureHeader = "X-AHP-Signature"

// Config is one notifier, as the config file's approvals.notifiers entries give it. The URL of a
// Slack webhook is a secret: give it in url_env or url_file.
type Config struct {
	// Name is what policies' approval blocks list.
	Name string `yaml:"name"`
	// Kind is webhook or slack.
	Kind string `yaml:"kind"`
	// URL, URLEnv or URLFile give the endpoint (exactly one).
	URL     string `yaml:"url"`
	URLEnv  string `yaml:"url_env"`
	URLFile string `yaml:"url_file"`
	// SecretEnv or SecretFile give the HMAC key of a webhook (optional; not both).
	SecretEnv  string `yaml:"secret_env"`
	SecretFile string `yaml:"secret_file"`
	// Timeout bounds one attempt (default 5s).
	Timeout time.Duration `yaml:"timeout"`
	// Retries are the attempts after the first (default 3, at most 10).
	Retries *int `yaml:"retries"`
}

// Options configure a Dispatcher; zero fields take the defaults.
type Options struct {
	// Link gives where to decide an approval ("" leaves the link out).
	Link func(id string) string
	// Redact masks secrets in free text (default: none — set it).
	Redact func(string) string
	// Client sends the requests (default: a client with no redirects).
	Client *http.Client
	// QueueSize and QueueBytes bound the notifications waiting (default 256 and 4 MiB).
	QueueSize, QueueBytes int
	// Backoff is the wait before the first retry, doubled for each next one (default 500ms).
	Backoff time.Duration
	// OnResult is called with sent, failed or dropped for every notification (metrics).
	OnResult func(result string)
	// LookupEnv and ReadFile read secrets (defaults: os.LookupEnv, os.ReadFile).
	LookupEnv func(string) (string, bool)
	ReadFile  func(string) ([]byte, error)
	// Logger receives delivery failures (default slog.Default()).
	Logger *slog.Logger
}

// notifier is a resolved Config.
type notifier struct {
	name, kind, url string
	secret          []byte
	timeout         time.Duration
	retries         int
}

// job is one notification to deliver.
type job struct {
	n    *notifier
	body []byte
}

// Dispatcher delivers notifications. Notify never blocks; Run delivers until its context ends.
type Dispatcher struct {
	opts      Options
	notifiers map[string]*notifier

	mu     sync.Mutex
	queue  []job
	bytes  int
	ready  chan struct{} // 1: something was queued
	warned map[string]bool
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// New checks the notifiers and reads their URLs and secrets. Errors name the notifier and field,
// never a URL or secret.
func New(cfgs []Config, opts Options) (*Dispatcher, error) {
	if opts.Client == nil {
		opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 256
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = 4 << 20
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.ReadFile == nil {
		opts.ReadFile = os.ReadFile
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Redact == nil {
		opts.Redact = func(s string) string { return s }
	}
	d := &Dispatcher{opts: opts, notifiers: map[string]*notifier{}, ready: make(chan struct{}, 1), warned: map[string]bool{}}
	for i, c := range cfgs {
		n, err := d.resolve(c)
		if err != nil {
			return nil, fmt.Errorf("approvals.notifiers[%d]: %w", i, err)
		}
		if _, dup := d.notifiers[n.name]; dup {
			return nil, fmt.Errorf("approvals.notifiers[%d]: name %q already used", i, n.name)
		}
		d.notifiers[n.name] = n
	}
	return d, nil
}

func (d *Dispatcher) resolve(c Config) (*notifier, error) {
	if !namePattern.MatchString(c.Name) {
		return nil, errors.New("name: required; lower-case letters, digits, . _ - (at most 64)")
	}
	n := &notifier{name: c.Name, kind: c.Kind, timeout: c.Timeout, retries: 3}
	switch c.Kind {
	case KindWebhook, KindSlack:
	default:
		return nil, fmt.Errorf("%s: kind: want %s or %s", c.Name, KindWebhook, KindSlack)
	}
	if n.timeout <= 0 {
		n.timeout = 5 * time.Second
	}
	if c.Retries != nil {
		if *c.Retries < 0 || *c.Retries > 10 {
			return nil, fmt.Errorf("%s: retries: want 0 to 10", c.Name)
		}
		n.retries = *c.Retries
	}
	u, err := d.secret(c.Name, "url", c.URL, c.URLEnv, c.URLFile, true)
	if err != nil {
		return nil, err
	}
	if c.Kind == KindSlack && c.URL != "" {
		return nil, fmt.Errorf("%s: url: a Slack webhook URL is a secret; give it in url_env or url_file", c.Name)
	}
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
		return nil, fmt.Errorf("%s: url: want an http:// or https:// URL", c.Name)
	}
	n.url = u
	if c.Kind == KindWebhook {
		s, err := d.secret(c.Name, "secret", "", c.SecretEnv, c.SecretFile, false)
		if err != nil {
			return nil, err
		}
		n.secret = []byte(s)
	} else if c.SecretEnv != "" || c.SecretFile != "" {
		return nil, fmt.Errorf("%s: secret: only webhook notifiers sign their requests", c.Name)
	}
	return n, nil
}

// secret reads one of a literal, an environment variable or a file.
func (d *Dispatcher) secret(name, field, literal, env, file string, required bool) (string, error) {
	given := 0
	for _, s := range []string{literal, env, file} {
		if s != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return "", fmt.Errorf("%s: %s: give one of %s, %s_env, %s_file", name, field, field, field, field)
	case given == 0 && required:
		return "", fmt.Errorf("%s: %s: required (%s, %s_env or %s_file)", name, field, field, field, field)
	case literal != "":
		return literal, nil
	case env != "":
		v, ok := d.opts.LookupEnv(env)
		if !ok || v == "" {
			return "", fmt.Errorf("%s: %s_env: environment variable %s is not set", name, field, env)
		}
		return v, nil
	case file != "":
		b, err := d.opts.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s: %s_file: cannot read the file", name, field)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", nil
}

// Names lists the configured notifiers.
func (d *Dispatcher) Names() []string {
	out := make([]string, 0, len(d.notifiers))
	for n := range d.notifiers {
		out = append(out, n)
	}
	return out
}

// Notify queues a notification of a to each of its notifiers. It never blocks: when the queue is
// full the notification is dropped (counted and logged).
func (d *Dispatcher) Notify(a approval.Approval) {
	for _, name := range a.Notifiers {
		n, ok := d.notifiers[name]
		if !ok {
			d.warnUnknown(name)
			continue
		}
		body, err := d.body(n, a)
		if err != nil {
			d.opts.Logger.Error("approval notification could not be built", "notifier", name, "approval_id", a.ID, "error", err)
			d.result("failed")
			continue
		}
		d.mu.Lock()
		full := len(d.queue) >= d.opts.QueueSize || d.bytes+len(body) > d.opts.QueueBytes
		if !full {
			d.queue = append(d.queue, job{n, body})
			d.bytes += len(body)
		}
		d.mu.Unlock()
		if full {
			d.opts.Logger.Warn("approval notification dropped: the queue is full", "notifier", name, "approval_id", a.ID)
			d.result("dropped")
			continue
		}
		select {
		case d.ready <- struct{}{}:
		default:
		}
	}
}

func (d *Dispatcher) warnUnknown(name string) {
	d.mu.Lock()
	seen := d.warned[name]
	d.warned[name] = true
	d.mu.Unlock()
	if !seen {
		d.opts.Logger.Warn("an approval rule names a notifier that is not configured", "notifier", name)
	}
}

func (d *Dispatcher) result(r string) {
	if d.opts.OnResult != nil {
		d.opts.OnResult(r)
	}
}

// Run delivers queued notifications one at a time until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.ready:
		}
		for {
			d.mu.Lock()
			if len(d.queue) == 0 {
				d.mu.Unlock()
				break
			}
			j := d.queue[0]
			d.queue[0] = job{}
			d.queue = d.queue[1:]
			d.bytes -= len(j.body)
			d.mu.Unlock()
			d.deliver(ctx, j)
			if ctx.Err() != nil {
				return
			}
		}
	}
}

// deliver posts one notification with retries and backoff.
func (d *Dispatcher) deliver(ctx context.Context, j job) {
	wait := d.opts.Backoff
	var err error
	for attempt := 0; attempt <= j.n.retries; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wait *= 2
		}
		if err = d.post(ctx, j); err == nil {
			d.result("sent")
			return
		}
	}
	d.opts.Logger.Error("approval notification failed after every retry", "notifier", j.n.name, "attempts", j.n.retries+1, "error", err)
	d.result("failed")
}

// errStatus is a non-2xx answer; the URL is never part of an error (it may be a secret).
type errStatus int

func (e errStatus) Error() string { return "receiver answered HTTP " + strconv.Itoa(int(e)) }

func (d *Dispatcher) post(ctx context.Context, j job) error {
	ctx, cancel := context.WithTimeout(ctx, j.n.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.n.url, bytes.NewReader(j.body))
	if err != nil {
		return errors.New("cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ahp-server")
	if len(j.n.secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(j.n.secret, time.Now(), j.body))
	}
	resp, err := d.opts.Client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			return uerr.Err // without the URL
		}
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errStatus(resp.StatusCode)
	}
	return nil
}

// Sign is the SignatureHeader value for body at t: "t=<unix>,v1=<hex HMAC-SHA256(secret,
// "<unix>.<body>")>". A receiver recomputes it and compares in constant time, and refuses old t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}
