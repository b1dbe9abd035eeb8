package metrics

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/prometheus/client_golang/prometheus"
)

func (m *Metrics) initEvents(f factory) {
	events := f.counterVec("ahp_observed_events_total",
		"Observed (fire-and-forget) events recorded, by canonical event type; duplicates are not counted.", "type")
	values := ahpv1.EventType(0).Descriptor().Values()
	n := 0
	for i := range values.Len() {
		n = max(n, int(values.Get(i).Number()))
	}
	m.events = make([]prometheus.Counter, n+1)
	for i := range values.Len() {
		t := ahpv1.EventType(values.Get(i).Number())
		if name := names.EventTypeName(t); name != "" {
			m.events[t] = events.WithLabelValues(name)
		}
	}
	m.unknownEvent = events.WithLabelValues("unknown")
	m.reg.MustRegister(watchCollector{m})
	m.reg.MustRegister(auditCollector{m})
}

// ObserveEvent counts one recorded observation of type t.
func (m *Metrics) ObserveEvent(t ahpv1.EventType) {
	if m == nil {
		return
	}
	if int(t) >= 0 && int(t) < len(m.events) && m.events[t] != nil {
		m.events[t].Inc()
		return
	}
	m.unknownEvent.Inc()
}

// WatchStats makes the watch metrics read stats — usually (*hub.Hub).Stats — at every scrape.
// The hub already counts subscribers and cut-offs; reading them at scrape time keeps one source
// of truth and puts nothing on the publish path. Until it is called the watch metrics read zero.
func (m *Metrics) WatchStats(stats func() hub.Stats) {
	if m == nil || stats == nil {
		return
	}
	m.watch.Store(&stats)
}

var (
	watchSubscribersDesc = prometheus.NewDesc("ahp_watch_subscribers",
		"Live Watch subscriptions.", nil, nil)
	watchCutOffsDesc = prometheus.NewDesc("ahp_watch_cutoffs_total",
		"Watch subscriptions ended because the watcher fell too far behind.", nil, nil)
	watchOverflowsDesc = prometheus.NewDesc("ahp_watch_overflows_total",
		"Items the watch hub's queue could not take; each ends every subscription.", nil, nil)
	watchPublishedDesc = prometheus.NewDesc("ahp_watch_published_total",
		"Items accepted for delivery to watchers.", nil, nil)
	watchBatchesDesc = prometheus.NewDesc("ahp_watch_batches_total",
		"Deliveries of published items to the watchers, several items each when they come fast; published/batches is the mean batch size.", nil, nil)
)

// watchCollector reads the hub's stats at scrape time.
type watchCollector struct{ m *Metrics }

func (watchCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- watchSubscribersDesc
	ch <- watchCutOffsDesc
	ch <- watchOverflowsDesc
	ch <- watchPublishedDesc
	ch <- watchBatchesDesc
}

func (c watchCollector) Collect(ch chan<- prometheus.Metric) {
	var s hub.Stats
	if fn := c.m.watch.Load(); fn != nil {
		s = (*fn)()
	}
	ch <- prometheus.MustNewConstMetric(watchSubscribersDesc, prometheus.GaugeValue, float64(s.Subscribers))
	ch <- prometheus.MustNewConstMetric(watchCutOffsDesc, prometheus.CounterValue, float64(s.CutOff))
	ch <- prometheus.MustNewConstMetric(watchOverflowsDesc, prometheus.CounterValue, float64(s.Overflows))
	ch <- prometheus.MustNewConstMetric(watchPublishedDesc, prometheus.CounterValue, float64(s.Published))
	ch <- prometheus.MustNewConstMetric(watchBatchesDesc, prometheus.CounterValue, float64(s.Batches))
}
