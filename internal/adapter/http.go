package adapter

import (
	"mime"
	"net/http"

	"github.com/ahp-gateway/ahp/internal/transport"
)

// ServeHTTP is the HTTP form, for Claude Code's "http" hook type: the hook input is the body of a
// POST (to any path), the hook output the body of the answer. The answer to a decided event is
// always 200 with the output JSON — the only way an http hook can refuse anything, since Claude
// Code treats every other status as a non-blocking error — or 204 when the hook has nothing to say
// (Claude Code: a 2xx with an empty body is success without output). 503 means an event was not
// recorded, 400 an input that could not be read (see Result.Status).
//
// Before the input is read: 405 for a method other than POST, 415 for a compressed body or a
// media type other than application/json — an absent Content-Type included, since a browser
// can send a cross-site POST without one (text/plain) but never a JSON one without asking
// first; Claude Code sends application/json — and 413 for a body over Config.MaxInputBytes.
// Host and Origin are checked around it (internal/transport/hostcheck).
func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := transport.ReadBody(w, r, transport.BodyRules{
		Limit: a.cfg.MaxInputBytes, Usage: "POST the hook input", AcceptType: isJSON,
		TooLarge: "hook input over the size limit", Logger: a.log,
	})
	if !ok {
		return
	}
	res := a.Handle(r.Context(), body)
	if res.Output == nil {
		status := res.Status
		if status == 0 || status == http.StatusOK {
			status = http.StatusNoContent
		}
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		http.Error(w, res.Stderr, status)
		return
	}
	transport.WriteJSON(w, http.StatusOK, res.Output, a.log)
}

// isJSON accepts application/json, with any parameters.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}
