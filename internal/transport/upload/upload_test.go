package upload_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/contentstore"
	"github.com/ahp-gateway/ahp/internal/transport/upload"
)

func hash(s string) string { b := sha256.Sum256([]byte(s)); return hex.EncodeToString(b[:]) }

func post(h http.Handler, body, contentType, sum string, mutate func(*http.Request)) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/content", strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	if sum != "" {
		r.Header.Set(upload.HeaderSHA256, sum)
	}
	if mutate != nil {
		mutate(r)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestUploadBinding(t *testing.T) {
	t.Parallel()
	store := contentstore.New(contentstore.Limits{MaxItemBytes: 8, MaxItems: 2, MaxOwnerItems: 2}, nil)
	h := upload.Handler(store, nil)

	w := post(h, "PNGDATA", "application/octet-stream", hash("PNGDATA"), nil)
	if w.Code != http.StatusCreated || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("upload: %d %s", w.Code, w.Body)
	}
	var receipt contentstore.Receipt
	if err := json.Unmarshal(w.Body.Bytes(), &receipt); err != nil || receipt.Size != 7 || receipt.SHA256 != hash("PNGDATA") || receipt.Ref == "" {
		t.Fatalf("receipt %s (%v)", w.Body, err)
	}
	if _, ok := store.Lookup("", receipt.Ref); !ok {
		t.Errorf("the receipt's ref is not referable")
	}

	for _, tc := range []struct {
		name   string
		body   string
		ctype  string
		sum    string
		mutate func(*http.Request)
		status int
	}{
		{"wrong hash", "PNGDATA", "application/octet-stream", hash("other"), nil, http.StatusBadRequest},
		{"upper-case hash", "PNGDATA", "application/octet-stream", strings.ToUpper(hash("PNGDATA")), nil, http.StatusBadRequest},
		{"no hash", "PNGDATA", "application/octet-stream", "", nil, http.StatusBadRequest},
		{"JSON body", `{"a":1}`, "application/json", hash(`{"a":1}`), nil, http.StatusUnsupportedMediaType},
		{"too large", "123456789", "application/octet-stream", hash("123456789"), nil, http.StatusRequestEntityTooLarge},
		{"chunked", "PNG", "application/octet-stream", hash("PNG"), func(r *http.Request) { r.ContentLength = -1 }, http.StatusLengthRequired},
		{"short body", "PNG", "application/octet-stream", hash("PNG"), func(r *http.Request) { r.ContentLength = 5 }, http.StatusBadRequest},
		{"GET", "", "application/octet-stream", hash(""), func(r *http.Request) { r.Method = http.MethodGet }, http.StatusMethodNotAllowed},
	} {
		w := post(h, tc.body, tc.ctype, tc.sum, tc.mutate)
		if w.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.status)
		}
		if b, _ := io.ReadAll(w.Body); strings.Contains(string(b), tc.sum) && tc.sum != "" {
			t.Errorf("%s: the answer repeats the header value", tc.name)
		}
	}
	// Two distinct items fill the store (MaxItems 2); a third is refused with 507.
	if w := post(h, "B", "application/octet-stream", hash("B"), nil); w.Code != http.StatusCreated {
		t.Fatalf("second item: %d", w.Code)
	}
	if w := post(h, "C", "application/octet-stream", hash("C"), nil); w.Code != http.StatusInsufficientStorage {
		t.Errorf("full store: %d %s", w.Code, w.Body)
	}
}

// TestUploadBelongsToItsPrincipal: an upload is referable only by the principal that made it.
func TestUploadBelongsToItsPrincipal(t *testing.T) {
	t.Parallel()
	store := contentstore.New(contentstore.Limits{}, nil)
	h := upload.Handler(store, nil)
	w := post(h, "DATA", "application/octet-stream", hash("DATA"), func(r *http.Request) {
		*r = *r.WithContext(auth.ContextWithPrincipal(r.Context(), auth.Principal{Name: "alice"}))
	})
	if w.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", w.Code, w.Body)
	}
	var receipt contentstore.Receipt
	if err := json.Unmarshal(w.Body.Bytes(), &receipt); err != nil {
		t.Fatal(err)
	}
	if _, ok := store.Lookup("alice", receipt.Ref); !ok {
		t.Errorf("alice cannot refer to her upload")
	}
	if _, ok := store.Lookup("", receipt.Ref); ok {
		t.Errorf("an unauthenticated caller sees alice's upload")
	}
}

// TestUploadQuotaPerPrincipal: a principal at its quota gets 507, another principal still stores.
func TestUploadQuotaPerPrincipal(t *testing.T) {
	t.Parallel()
	store := contentstore.New(contentstore.Limits{MaxItemBytes: 8, MaxItems: 4, MaxOwnerItems: 1}, nil)
	h := upload.Handler(store, nil)
	as := func(name string) func(*http.Request) {
		return func(r *http.Request) {
			*r = *r.WithContext(auth.ContextWithPrincipal(r.Context(), auth.Principal{Name: name}))
		}
	}
	if w := post(h, "A", "application/octet-stream", hash("A"), as("alice")); w.Code != http.StatusCreated {
		t.Fatalf("alice's first upload: %d %s", w.Code, w.Body)
	}
	w := post(h, "B", "application/octet-stream", hash("B"), as("alice"))
	if w.Code != http.StatusInsufficientStorage || !strings.Contains(w.Body.String(), "quota") {
		t.Errorf("alice over her quota: %d %s", w.Code, w.Body)
	}
	if w := post(h, "B", "application/octet-stream", hash("B"), as("bob")); w.Code != http.StatusCreated {
		t.Errorf("bob beside alice's full quota: %d %s", w.Code, w.Body)
	}
}
