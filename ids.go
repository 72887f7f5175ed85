package reins

import (
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
)

// newV7 returns a UUIDv7 (RFC 9562) for t: 48 bits of Unix milliseconds, 12 bits of sub-millisecond
// time (the RFC's method 3, so ids made in one process sort by time), and 62 random bits. It does
// not allocate, unlike uuid.NewV7, which reads crypto/rand through an interface. Decision ids
// need uniqueness and order, not secrecy.
func newV7(t time.Time) uuid.UUID {
	var u uuid.UUID
	ns := t.UnixNano()
	ms := uint64(ns / 1e6)
	frac := uint64(ns%1e6) * 4096 / 1e6 // sub-millisecond fraction in 12 bits
	r := rand.Uint64()
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	u[6] = 0x70 | byte(frac>>8)
	u[7] = byte(frac)
	u[8] = 0x80 | byte(r>>56)&0x3f
	u[9], u[10], u[11], u[12], u[13], u[14], u[15] = byte(r>>48), byte(r>>40), byte(r>>32), byte(r>>24), byte(r>>16), byte(r>>8), byte(r)
	return u
}
