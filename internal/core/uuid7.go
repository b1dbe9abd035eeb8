package core

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
	"unsafe"
)

// newUUIDv7 returns a version 7 UUID (RFC 9562) as its 36-character text, in one allocation
// (issue 18: github.com/google/uuid makes the random bytes and the text two): the random bytes
// are read into the tail of the text's own buffer. Like that package's NewV7 it puts 48 bits of
// Unix milliseconds and 12 bits of sub-millisecond time (rand_a) in front, and ids made by one
// process only ever grow.
func newUUIDv7() string {
	b := make([]byte, 36+16)
	u := b[36:]
	if _, err := rand.Read(u); err != nil { // crypto/rand does not fail on supported systems
		panic("core: no random source for decision ids: " + err.Error())
	}
	milli, seq := v7Time()
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(milli>>40), byte(milli>>32), byte(milli>>24), byte(milli>>16), byte(milli>>8), byte(milli)
	u[6] = 0x70 | byte(seq>>8)&0x0f // version 7
	u[7] = byte(seq)
	u[8] = u[8]&0x3f | 0x80 // variant 10
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return unsafe.String(&b[0], 36) // b is not written again
}

var (
	v7Mu   sync.Mutex
	v7Last int64 // milliseconds << 12 | sequence, of the last id
)

// v7Time returns the time in milliseconds and the sub-millisecond sequence (nanoseconds / 256,
// 0–3906), strictly greater together than for any earlier call.
func v7Time() (milli, seq int64) {
	nano := time.Now().UnixNano()
	milli = nano / 1e6
	seq = (nano - milli*1e6) >> 8
	now := milli<<12 | seq
	v7Mu.Lock()
	if now <= v7Last {
		now = v7Last + 1
	}
	v7Last = now
	v7Mu.Unlock()
	return now >> 12, now & 0xfff
}
