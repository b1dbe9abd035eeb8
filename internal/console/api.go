package console

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/encoding/protojson"
)

// Features lists the console pages a server can offer; a page whose feature is off shows what to
// configure instead of data.
type Features struct {
	// Approvals is true when the server holds approvals (the Approvals page has data).
	Approvals bool `json:"approvals"`
	// RuleCounts is true when rule match counts are kept (metrics on).
	RuleCounts bool `json:"rule_counts"`
}

type infoResponse struct {
	Version    string       `json:"version"`
	Auth       bool         `json:"auth"`
	Principal  string       `json:"principal,omitempty"`
	Scopes     []string     `json:"scopes,omitempty"`
	ServerTime time.Time    `json:"server_time"`
	Features   Features     `json:"features"`
	Tracker    TrackerStats `json:"tracker"`
	// EventTypes maps each EventType's JSON name (EVENT_TYPE_TOOL_BEFORE) to its canonical name
	// (tool.before), which the page shows.
	EventTypes map[string]string `json:"event_types"`
}

// eventTypeNames maps every EventType's JSON name to its canonical name.
var eventTypeNames = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	values := ahpv1.EventType(0).Descriptor().Values()
	for i := range values.Len() {
		v := values.Get(i)
		if v.Number() != 0 {
			out[string(v.Name())] = names.EventTypeName(ahpv1.EventType(v.Number()))
		}
	}
	return out
})

func (c *Console) info(w http.ResponseWriter, r *http.Request) {
	resp := infoResponse{
		Version:    c.deps.Version,
		Auth:       c.authOn,
		ServerTime: time.Now(),
		Features:   Features{Approvals: c.deps.Approvals != nil, RuleCounts: c.deps.Metrics != nil},
		Tracker:    c.tracker.Stats(),
		EventTypes: eventTypeNames(),
	}
	if p, ok := auth.PrincipalFrom(r.Context()); ok {
		resp.Principal = p.Name
		for _, s := range p.Scopes() {
			resp.Scopes = append(resp.Scopes, string(s))
		}
	}
	writeJSON(w, resp)
}

type ruleInfo struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	On          []string `json:"on,omitempty"`
	Effect      string   `json:"effect"`
	DryRun      bool     `json:"dry_run"`
	Fallback    string   `json:"fallback,omitempty"`
	Line        int      `json:"line,omitempty"`
	Hits        *uint64  `json:"hits,omitempty"`
	DryRunHits  *uint64  `json:"dry_run_hits,omitempty"`
}

type reloadInfo struct {
	Reloads  uint64        `json:"reloads"`
	Failures uint64        `json:"failures"`
	Last     *ReloadResult `json:"last,omitempty"`
	FromFile bool          `json:"from_file"`
}

type policyResponse struct {
	Name     string           `json:"name"`
	Source   string           `json:"source"`
	Digest   string           `json:"digest"`
	Revision PolicyRevision   `json:"revision"`
	History  []PolicyRevision `json:"history"`
	Text     string           `json:"text"`
	Redacted bool             `json:"redacted"`
	Rules    []ruleInfo       `json:"rules"`
	Reload   reloadInfo       `json:"reload"`
}

func (c *Console) policy(w http.ResponseWriter, _ *http.Request) {
	p := c.deps.Policy()
	rules := p.Rules()
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = r.ID
	}
	counts := c.deps.Metrics.RuleMatchCounts(ids)
	resp := policyResponse{
		Name: p.Name(), Source: p.Source(), Digest: p.Digest(), Revision: c.tracker.PolicyRevision(p),
		History: c.tracker.PolicyHistory(),
	}
	resp.Text, resp.Redacted = c.policyText(p.Text())
	for _, r := range rules {
		ri := ruleInfo{ID: r.ID, Description: r.Description, On: r.On, Effect: r.Effect, DryRun: r.DryRun, Fallback: r.Fallback, Line: r.Line}
		if mc, ok := counts[r.ID]; ok && c.deps.Metrics != nil && mc.Counted {
			ri.Hits, ri.DryRunHits = &mc.Enforce, &mc.DryRun
		}
		resp.Rules = append(resp.Rules, ri)
	}
	if c.deps.Reloads != nil {
		st := c.deps.Reloads()
		if st.Last != nil && st.Last.Error != "" {
			last := *st.Last
			last.Error, _ = c.policyText([]byte(last.Error)) // it may quote the file
			st.Last = &last
		}
		resp.Reload = reloadInfo{Reloads: st.Reloads, Failures: st.Failures, Last: st.Last, FromFile: st.FromFile}
	}
	writeJSON(w, resp)
}

// policyText is the policy source as the page may show it: a literal secret someone put in a
// rule (a token compared in CEL) is masked like anything else the console shows.
func (c *Console) policyText(text []byte) (string, bool) {
	if c.deps.Redactor == nil {
		return string(text), false
	}
	// Line by line: a line is far below the redactor's field cap, the whole file may not be.
	lines := strings.SplitAfter(string(text), "\n")
	masked := false
	for i, line := range lines {
		out, rep := c.deps.Redactor.String(line)
		lines[i] = out
		masked = masked || len(rep.Masked) > 0 || len(rep.Truncated) > 0
	}
	return strings.Join(lines, ""), masked
}

type sessionsResponse struct {
	Sessions []SessionSummary `json:"sessions"`
	Tracker  TrackerStats     `json:"tracker"`
}

func (c *Console) sessions(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, sessionsResponse{Sessions: c.tracker.Sessions(), Tracker: c.tracker.Stats()})
}

// itemJSON is one item as the page gets it: the WatchResponse JSON the Watch stream sends, and
// the policy revision in force when the console recorded it.
type itemJSON struct {
	Item   json.RawMessage `json:"item"`
	Policy PolicyRevision  `json:"policy"`
}

const maxRecent = 1000

func (c *Console) recent(w http.ResponseWriter, r *http.Request) {
	n := 200
	if s := r.URL.Query().Get("limit"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > maxRecent {
			writeError(w, http.StatusBadRequest, "limit: want a whole number from 1 to "+strconv.Itoa(maxRecent))
			return
		}
		n = v
	}
	items, revs := c.tracker.Recent(n)
	out := struct {
		Items   []itemJSON   `json:"items"`
		Tracker TrackerStats `json:"tracker"`
	}{Items: make([]itemJSON, 0, len(items)), Tracker: c.tracker.Stats()}
	for i, it := range items {
		out.Items = append(out.Items, itemJSON{Item: encodeItem(it), Policy: revs[i]})
	}
	writeJSON(w, out)
}

func (c *Console) decision(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if len(id) > 256 {
		writeError(w, http.StatusBadRequest, "decision id: longer than 256 bytes")
		return
	}
	it, rev, ok := c.tracker.Decision(id)
	if !ok {
		writeError(w, http.StatusNotFound, "decision not found: the console remembers only recent decisions (see Live)")
		return
	}
	writeJSON(w, itemJSON{Item: encodeItem(it), Policy: rev})
}

// encodeItem encodes it exactly as Watch sends it over the Connect protocol's JSON codec.
func encodeItem(it hub.Item) json.RawMessage {
	b, err := protojson.Marshal(&ahpv1.WatchResponse{Event: it.Event, Decision: it.Decision, Time: it.Time.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}
