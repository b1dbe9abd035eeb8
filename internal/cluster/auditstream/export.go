package auditstream

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// replicaName is what a subject's last token must look like to name a file.
var replicaName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Export reads the whole audit stream and writes each replica's records, in stream order, to
// dir/<replica>.jsonl (created, never overwritten). It returns the files written with their
// record counts.
func Export(ctx context.Context, conn *cluster.Conn, dir string) (map[string]int, error) {
	js := conn.JetStream()
	stream := conn.Bucket(StreamName)
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("reading the audit stream %s: %w", stream, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the audit stream %s: %w", stream, err)
	}
	files := map[string]*os.File{}
	writers := map[string]*bufio.Writer{}
	counts := map[string]int{}
	closeAll := func() error {
		var first error
		for name, f := range files {
			if err := writers[name].Flush(); err != nil && first == nil {
				first = err
			}
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	pending := info.NumPending
	prefix := conn.Subject(SubjectPrefix + ".")
	for pending > 0 {
		batch, err := cons.Fetch(int(min(pending, 1000)), jetstream.FetchContext(ctx))
		if err != nil {
			closeAll()
			return nil, err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			pending--
			meta, err := m.Metadata()
			if err == nil {
				pending = meta.NumPending
			}
			replica := strings.TrimPrefix(m.Subject(), prefix)
			if !replicaName.MatchString(replica) {
				continue // not one of ours
			}
			w, ok := writers[replica]
			if !ok {
				path := filepath.Join(dir, replica+".jsonl")
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
				if err != nil {
					closeAll()
					return nil, err
				}
				files[replica], w = f, bufio.NewWriter(f)
				writers[replica] = w
			}
			if _, err := w.Write(m.Data()); err != nil {
				closeAll()
				return nil, err
			}
			counts[replica]++
		}
		if err := batch.Error(); err != nil {
			closeAll()
			return nil, err
		}
		if n == 0 {
			break
		}
	}
	if err := closeAll(); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(counts))
	for r, n := range counts {
		out[filepath.Join(dir, r+".jsonl")] = n
	}
	return out, nil
}

// SortedFiles lists the files of an Export result in name order.
func SortedFiles(files map[string]int) []string {
	out := make([]string, 0, len(files))
	for f := range files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
