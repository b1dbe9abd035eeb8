package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/config"
)

func TestParseAndStrictness(t *testing.T) {
	t.Parallel()
	f, err := config.Parse([]byte("audit: {path: /tmp/a.jsonl, fsync: always, required: true}\nmetrics: {addr: 127.0.0.1:9464}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.AuditEnabled() || !f.Audit.Required || f.Metrics.Addr == "" {
		t.Fatalf("file = %+v", f)
	}
	if m, _ := f.FsyncMode(); m.String() != "always" {
		t.Fatalf("fsync = %v", m)
	}
	for name, doc := range map[string]string{
		"unknown key":           "audti: {}\n",
		"bad fsync":             "audit: {fsync: sometimes}\n",
		"literal token":         "auth: {tokens: [{name: a, scopes: [agent], token: abcdefabcdefabcdef}]}\n",
		"bad detector":          "redaction: {disable: [no_such_detector]}\n",
		"unknown nested":        "metrics: {adr: x}\n",
		"cluster literal token": "cluster: {servers: [nats://127.0.0.1:4222], token: abcdefabcdef}\n",
		"cluster token in URL":  "cluster: {servers: ['nats://me:pw@127.0.0.1:4222']}\n",
		"cluster token_env":     "cluster: {servers: [nats://x:4222], token_env: 'abc def'}\n",
		"cluster mode":          "cluster: {servers: [nats://x:4222], on_unavailable: maybe}\n",
		"cluster prefix":        "cluster: {servers: [nats://x:4222], prefix: 'a.b'}\n",
	} {
		if _, err := config.Parse([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "abcdefabcdefabcdef") {
			t.Errorf("%s: error echoes the secret: %v", name, err)
		}
	}
	if f, err := config.Parse(nil); err != nil || f.AuditEnabled() {
		t.Fatalf("empty file: %v %v", f, err)
	}
}

// TestREADMEConfigExampleParses keeps the README's configuration example honest.
func TestREADMEConfigExampleParses(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(data), "## Security")
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatal("README Security section has no yaml block")
	}
	block, _, _ = strings.Cut(block, "```")
	if _, err := config.Parse([]byte(block)); err != nil {
		t.Fatalf("README config does not parse: %v", err)
	}
}
