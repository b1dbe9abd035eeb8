package adapter

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
)

// ServeHTTP is the HTTP form, for Claude Code's "http" hook type: the hook input is the body of a
// POST (to any path), the hook output the body of the answer. The answer to a decided event is
// always 200 with the output JSON — the only way an http hook can refuse anything, since Claude
// Code treats every other status as a non-blocking error — or 204 when the hook has nothing to say
// (Claude Code: a 2xx with an empty body is success without output). 503 means an event was not
// recorded, 400 an input that could not be read (see Result.Status).
//
// Before the input is read: 405 for a method other than POST, 415 for a compressed body or a
// media type other than application/json (an absent Content-Type is accepted), 413 for a body
// over Config.MaxInputBytes.
func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: POST the hook input", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Content-Encoding") != "" {
		http.Error(w, "unsupported Content-Encoding: send the body uncompressed", http.StatusUnsupportedMediaType)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			http.Error(w, "unsupported media type: want Content-Type: application/json", http.StatusUnsupportedMediaType)
			return
		}
	}
	limit := int64(a.cfg.MaxInputBytes)
	if r.ContentLength > limit {
		a.tooLarge(w)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			a.tooLarge(w)
			return
		}
		a.log.Debug("request body unreadable", "error", err.Error())
		http.Error(w, "request body could not be read", http.StatusBadRequest)
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
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(res.Output)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(res.Output); err != nil {
		a.log.Debug("writing the answer failed", "error", err.Error())
	}
}

func (a *Adapter) tooLarge(w http.ResponseWriter) {
	a.log.Warn("hook input over the size limit", "limit", a.cfg.MaxInputBytes)
	http.Error(w, "request body is over the "+strconv.Itoa(a.cfg.MaxInputBytes)+"-byte limit", http.StatusRequestEntityTooLarge)
}
