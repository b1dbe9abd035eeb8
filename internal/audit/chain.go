package audit

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"
)

// The hash chain (docs/audit.md has the full description):
//
//	line      = canonical[:len(canonical)-1] + `,"hash":"` + hash + `"}`
//	canonical = the line with its final `,"hash":"…"` member removed
//	hash      = lower-case hex of SHA-256(prev + canonical)
//
// where prev is the 64 hex characters of the previous record's hash (for the first record of a
// log, a random genesis value), written in the record as its "prev" member. The hash member is
// always the last member of the line, so a verifier needs no JSON canonicalisation: it strips a
// fixed-size suffix. The writer puts "seq" first and "prev" just before "hash".

const (
	hashMember = `,"hash":"`
	hashHexLen = sha256.Size * 2
	// hashSuffixLen is the length of `,"hash":"<64 hex>"}`.
	hashSuffixLen = len(hashMember) + hashHexLen + len(`"}`)
)

// newGenesis returns a random chain start, so two logs never share a chain.
func newGenesis() string {
	var b [sha256.Size]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// appendLine appends the sealed line of one record (with its trailing newline) to dst and returns
// it with the record's hash. body is the record's JSON object without seq, prev and hash.
func appendLine(dst []byte, h hash.Hash, seq uint64, body []byte, prev string) ([]byte, string) {
	start := len(dst)
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, ',')
	dst = append(dst, body[1:len(body)-1]...)
	dst = append(dst, `,"prev":"`...)
	dst = append(dst, prev...)
	dst = append(dst, `"}`...)

	h.Reset()
	h.Write([]byte(prev))
	h.Write(dst[start:])
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	var hx [hashHexLen]byte
	hex.Encode(hx[:], sum[:])

	dst = dst[:len(dst)-1] // reopen the object
	dst = append(dst, hashMember...)
	dst = append(dst, hx[:]...)
	dst = append(dst, `"}`...)
	dst = append(dst, '\n')
	return dst, string(hx[:])
}

// lineInfo is what the chain needs from one line.
type lineInfo struct {
	Seq  uint64
	Prev string
	Hash string
}

// problem is why one line fails its own checks.
type problem struct {
	check  Check
	detail string
}

// parseLine checks one line (without its newline) on its own: its shape and that its content
// hashes to its hash. The chain checks (seq, prev) are the caller's.
func parseLine(line []byte) (lineInfo, *problem) {
	if len(line) < 2+hashSuffixLen || !bytes.HasSuffix(line, []byte(`"}`)) {
		return lineInfo{}, &problem{CheckMalformed, "not an audit record: it does not end with the hash member"}
	}
	cut := len(line) - hashSuffixLen
	if string(line[cut:cut+len(hashMember)]) != hashMember {
		return lineInfo{}, &problem{CheckMalformed, "not an audit record: it does not end with the hash member"}
	}
	suffixHash := string(line[cut+len(hashMember) : len(line)-2])
	if !isHex(suffixHash) {
		return lineInfo{}, &problem{CheckMalformed, "the hash is not 64 lower-case hex digits"}
	}
	var head struct {
		Seq  *uint64 `json:"seq"`
		Prev *string `json:"prev"`
		Hash string  `json:"hash"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return lineInfo{}, &problem{CheckMalformed, "not valid JSON: " + err.Error()}
	}
	switch {
	case head.Seq == nil:
		return lineInfo{}, &problem{CheckMalformed, `no "seq" member`}
	case head.Prev == nil || len(*head.Prev) != hashHexLen || !isHex(*head.Prev):
		return lineInfo{}, &problem{CheckMalformed, `no "prev" member of 64 lower-case hex digits`}
	case head.Hash != suffixHash:
		return lineInfo{}, &problem{CheckMalformed, `more than one "hash" member`}
	}
	h := sha256.New()
	h.Write([]byte(*head.Prev))
	h.Write(line[:cut])
	h.Write([]byte("}"))
	if got := hex.EncodeToString(h.Sum(nil)); got != suffixHash {
		return lineInfo{}, &problem{CheckHash, fmt.Sprintf("hash mismatch: the record's content hashes to %s…, not to its hash %s…: the line was edited", got[:12], suffixHash[:12])}
	}
	return lineInfo{Seq: *head.Seq, Prev: *head.Prev, Hash: suffixHash}, nil
}

func isHex(s string) bool {
	if len(s) != hashHexLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
