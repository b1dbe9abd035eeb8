// Package upload serves the Agent Hooks Protocol "draft" content upload binding on HTTP: a POST
// of raw octets (Content-Type application/octet-stream, an exact Content-Length, the
// AHP-Content-SHA256 header with 64 lowercase hex characters) is checked for length and hash,
// kept in a contentstore.Store under the authenticated principal and answered 201 with the
// receipt {ref, size, sha256}.
//
// Status codes as the binding defines them: 400 framing, length or hash mismatch; 405 not a POST;
// 411 no Content-Length (chunked bodies are refused); 413 too large; 415 another media type;
// 507 the store is full or the principal's quota used up. Nothing in a response repeats the request's bytes or header values.
package upload

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"

	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/contentstore"
)

// HeaderSHA256 carries the uploaded content's SHA-256.
const HeaderSHA256 = "AHP-Content-SHA256"

// Handler returns the http.Handler storing uploads in store.
func Handler(store *contentstore.Store, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &handler{store: store, log: log}
}

type handler struct {
	store *contentstore.Store
	log   *slog.Logger
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fail(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/octet-stream" {
		fail(w, http.StatusUnsupportedMediaType, "Content-Type must be application/octet-stream")
		return
	}
	if r.ContentLength < 0 || len(r.TransferEncoding) > 0 {
		fail(w, http.StatusLengthRequired, "an exact Content-Length is required")
		return
	}
	want := r.Header.Get(HeaderSHA256)
	if !isSHA256(want) {
		fail(w, http.StatusBadRequest, HeaderSHA256+" must be exactly 64 lowercase hexadecimal characters")
		return
	}
	limit := h.store.Limits().MaxItemBytes
	if r.ContentLength > limit {
		fail(w, http.StatusRequestEntityTooLarge, "content over the size limit")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, r.ContentLength+1))
	switch {
	case err != nil:
		fail(w, http.StatusBadRequest, "the body could not be read")
		return
	case int64(len(data)) != r.ContentLength:
		fail(w, http.StatusBadRequest, "the body length does not match Content-Length")
		return
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != want {
		fail(w, http.StatusBadRequest, "the body does not match "+HeaderSHA256)
		return
	}
	owner := ""
	if p, ok := auth.PrincipalFrom(r.Context()); ok {
		owner = p.Name
	}
	receipt, err := h.store.Put(owner, data, want)
	switch {
	case errors.Is(err, contentstore.ErrTooLarge):
		fail(w, http.StatusRequestEntityTooLarge, "content over the size limit")
		return
	case errors.Is(err, contentstore.ErrQuota):
		h.log.Info("content upload refused: the principal's quota is used up")
		fail(w, http.StatusInsufficientStorage, "your upload quota is used up; retry when earlier uploads expire")
		return
	case errors.Is(err, contentstore.ErrFull):
		h.log.Warn("content upload refused: store full")
		fail(w, http.StatusInsufficientStorage, "the content store is full; retry later")
		return
	case err != nil:
		fail(w, http.StatusInternalServerError, "the content could not be stored")
		return
	}
	body, _ := json.Marshal(receipt)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

func fail(w http.ResponseWriter, status int, reason string) {
	body, _ := json.Marshal(map[string]string{"error": reason})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
