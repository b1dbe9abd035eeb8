package notify_test

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/notify"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

const secretInReason = "ghp_0123456789abcdefghijABCDEFGHIJ012345"

type received struct {
	body []byte
	sig  string
}

// receiver is a loopback HTTP server answering the statuses given in turn (then 200).
func receiver(t *testing.T, statuses ...int) (string, <-chan received) {
	t.Helper()
	ch := make(chan received, 16)
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		status := http.StatusOK
		if len(statuses) > 0 {
			status, statuses = statuses[0], statuses[1:]
		}
		mu.Unlock()
		ch <- received{b, r.Header.Get(notify.SignatureHeader)}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

func dispatcher(t *testing.T, cfgs []notify.Config, env map[string]string, results chan<- string) *notify.Dispatcher {
	t.Helper()
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := notify.New(cfgs, notify.Options{
		Link:      func(id string) string { return "https://console.example/approvals/" + id },
		Redact:    func(s string) string { out, _ := red.String(s); return out },
		Backoff:   time.Millisecond,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		OnResult:  func(r string) { results <- r },
		Logger:    testkit.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return d
}

func pendingApproval(notifiers ...string) approval.Approval {
	return approval.Approval{
		ID: "apv-1", RuleIDs: []string{"ask-deploy"}, Kind: "ask", Reason: "deploy with token " + secretInReason,
		Agent: "agent-1", Session: "s-1", Tool: "Bash", EventType: "tool.before", Input: `{"command":"deploy prod"}`,
		HoldUntil: time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC), Notifiers: notifiers,
	}
}

func TestWebhookSignedRedactedWithRetries(t *testing.T) {
	t.Parallel()
	url, got := receiver(t, http.StatusInternalServerError, http.StatusBadGateway)
	results := make(chan string, 4)
	d := dispatcher(t, []notify.Config{{Name: "ops", Kind: notify.KindWebhook, URL: url, SecretEnv: "HOOK_SECRET"}},
		map[string]string{"HOOK_SECRET": "s3cret"}, results)
	d.Notify(pendingApproval("ops", "not-configured"))
	var last received
	for range 3 { // two failures, then the delivery
		last = testkit.Receive(t, got, "the receiver got no request")
	}
	if r := testkit.Receive(t, results, "no result"); r != "sent" {
		t.Fatalf("result = %q, want sent", r)
	}
	var p notify.Payload
	if err := json.Unmarshal(last.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.ApprovalID != "apv-1" || p.RuleID != "ask-deploy" || p.Agent != "agent-1" || p.Session != "s-1" || p.Tool != "Bash" ||
		p.Input != `{"command":"deploy prod"}` || p.Link != "https://console.example/approvals/apv-1" {
		t.Errorf("payload = %+v", p)
	}
	if strings.Contains(string(last.body), secretInReason) {
		t.Errorf("the payload carries the secret: %s", last.body)
	}
	// The signature: t=<unix>,v1=<hmac of "<t>.<body>">.
	ts, _, _ := strings.Cut(strings.TrimPrefix(last.sig, "t="), ",")
	unix, err := parseUnix(ts)
	if err != nil {
		t.Fatalf("signature %q: %v", last.sig, err)
	}
	if want := notify.Sign([]byte("s3cret"), unix, last.body); !hmac.Equal([]byte(want), []byte(last.sig)) {
		t.Errorf("signature = %q, want %q", last.sig, want)
	}
}

func parseUnix(s string) (time.Time, error) {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return time.Time{}, io.ErrUnexpectedEOF
		}
		n = n*10 + int64(c-'0')
	}
	return time.Unix(n, 0), nil
}

func TestWebhookFailsAfterBoundedRetries(t *testing.T) {
	t.Parallel()
	url, got := receiver(t, 500, 500, 500)
	results := make(chan string, 4)
	zero := 2
	d := dispatcher(t, []notify.Config{{Name: "ops", Kind: notify.KindWebhook, URL: url, Retries: &zero}}, nil, results)
	d.Notify(pendingApproval("ops"))
	for range 3 {
		testkit.Receive(t, got, "fewer attempts than 1 + retries")
	}
	if r := testkit.Receive(t, results, "no result"); r != "failed" {
		t.Fatalf("result = %q, want failed", r)
	}
}

func TestSlackMessage(t *testing.T) {
	t.Parallel()
	url, got := receiver(t)
	results := make(chan string, 4)
	d := dispatcher(t, []notify.Config{{Name: "chat", Kind: notify.KindSlack, URLEnv: "SLACK_URL"}}, map[string]string{"SLACK_URL": url}, results)
	d.Notify(pendingApproval("chat"))
	r := testkit.Receive(t, got, "the receiver got no request")
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string                `json:"type"`
			Text struct{ Text string } `json:"text"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(r.body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Text != "Approval needed: Bash by agent-1" || len(msg.Blocks) != 2 || !strings.Contains(msg.Blocks[1].Text.Text, "apv-1") {
		t.Errorf("slack message = %s", r.body)
	}
	if strings.Contains(string(r.body), secretInReason) || r.sig != "" {
		t.Errorf("slack message carries the secret or a signature: %s %q", r.body, r.sig)
	}
	testkit.Receive(t, results, "no result")
}

func TestQueueIsBounded(t *testing.T) {
	t.Parallel()
	results := make(chan string, 4)
	d, err := notify.New([]notify.Config{{Name: "ops", Kind: notify.KindWebhook, URL: "http://127.0.0.1:1/"}},
		notify.Options{QueueSize: 1, OnResult: func(r string) { results <- r }, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	d.Notify(pendingApproval("ops")) // queued; nothing runs the queue
	d.Notify(pendingApproval("ops"))
	if r := testkit.Receive(t, results, "no result"); r != "dropped" {
		t.Errorf("result = %q, want dropped", r)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  notify.Config
		want string
	}{
		{notify.Config{Name: "Bad Name", Kind: "webhook", URL: "http://x"}, "name: required"},
		{notify.Config{Name: "a", Kind: "email", URL: "http://x"}, "kind: want webhook or slack"},
		{notify.Config{Name: "a", Kind: "slack", URL: "https://hooks.example/T0/B0/secret"}, "a Slack webhook URL is a secret"},
		{notify.Config{Name: "a", Kind: "webhook"}, "url: required"},
		{notify.Config{Name: "a", Kind: "webhook", URLEnv: "MISSING"}, "environment variable MISSING is not set"},
		{notify.Config{Name: "a", Kind: "webhook", URL: "ftp://x"}, "want an http:// or https:// URL"},
	} {
		_, err := notify.New([]notify.Config{tc.cfg}, notify.Options{LookupEnv: func(string) (string, bool) { return "", false }})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hooks.example") {
			t.Errorf("error echoes the URL: %v", err)
		}
	}
}
