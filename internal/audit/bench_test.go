package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/audit"
)

// BenchmarkAppend measures sustained ingest: records built with RecordFor, redacted, queued and
// written, including the final flush, so records/s counts records on disk (in the page cache for
// never and interval; synced for always).
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []audit.FsyncMode{audit.FsyncNever, audit.FsyncInterval, audit.FsyncAlways} {
		for _, parallel := range []bool{false, true} {
			name := "fsync=" + mode.String()
			if parallel {
				name += "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				l := open(b, audit.Config{Dir: b.TempDir(), Fsync: mode, QueueSize: 8192, AppendTimeout: 5 * time.Second})
				ev := shellEvent("e1", "git push origin main")
				d := denial("e1", "pushing to main is not allowed")
				b.ReportAllocs()
				start := time.Now()
				if parallel {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := l.Append(audit.RecordFor(ev, d, start)); err != nil {
								b.Error(err)
								return
							}
						}
					})
				} else {
					for b.Loop() {
						if err := l.Append(audit.RecordFor(ev, d, start)); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := l.Flush(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			})
		}
	}
}

// BenchmarkVerify measures verification speed over a 10 000-record log.
func BenchmarkVerify(b *testing.B) {
	files := writeLog(b, 10_000, 0)
	b.ResetTimer()
	for b.Loop() {
		if rep, err := audit.Verify(files...); err != nil || !rep.OK() {
			b.Fatal(err, rep.Failure)
		}
	}
	b.ReportMetric(float64(10_000*b.N)/b.Elapsed().Seconds(), "records/s")
}
