package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Durability says when [JSONL.Write] returns relative to the record reaching the disk.
type Durability uint8

// The durability modes. The zero value is the safest.
const (
	// DurabilitySync: Write returns once its record is written and fdatasync has returned.
	// Records are written and synced one at a time (an fsync costs a fraction of a
	// millisecond, so a few thousand records per second).
	DurabilitySync Durability = iota
	// DurabilityGroup: Write returns once its record is written and a later fdatasync has
	// returned; concurrent writers share one fsync (group commit). A record waits for at most
	// the fsync in progress and the next one, so the added latency is bounded by two fsyncs.
	DurabilityGroup
	// DurabilityBuffered: Write returns once its record is in a buffer of the sink; the sink
	// writes whole lines when the buffer fills, FlushInterval after the first buffered record,
	// and on Flush and Close, and never fsyncs except on Flush and Close. A full buffer is
	// hashed into the chain and written by a goroutine of the sink while writers fill the next
	// one (up to two full buffers wait for it); if a write fails, the next Write, Flush or
	// Close reports it. A crash loses the buffers: at most three times BufferSize of
	// acknowledged records. For tests, development and high-rate telemetry.
	DurabilityBuffered
)

var durabilityNames = [...]string{"sync", "group", "buffered"}

// String returns "sync", "group" or "buffered".
func (d Durability) String() string {
	if int(d) < len(durabilityNames) {
		return durabilityNames[d]
	}
	return fmt.Sprintf("Durability(%d)", uint8(d))
}

// ParseDurability parses "sync", "group" or "buffered".
func ParseDurability(name string) (Durability, error) {
	for i, n := range durabilityNames {
		if name == n {
			return Durability(i), nil
		}
	}
	return DurabilitySync, fmt.Errorf("audit: unknown durability %q (want sync, group or buffered)", name)
}

// MarshalText implements [encoding.TextMarshaler].
func (d Durability) MarshalText() ([]byte, error) {
	if int(d) >= len(durabilityNames) {
		return nil, fmt.Errorf("audit: invalid durability %d", uint8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseDurability].
func (d *Durability) UnmarshalText(text []byte) error {
	v, err := ParseDurability(string(text))
	*d = v
	return err
}

// MaxLineSize is the largest line a JSONL log holds (4 MiB): Write refuses a record whose line
// would be longer, and readers report a longer line as damaged.
const MaxLineSize = 4 << 20

// Defaults of [JSONLOptions].
const (
	DefaultMaxFileSize   = 64 << 20
	DefaultBufferSize    = 64 << 10
	DefaultFlushInterval = 100 * time.Millisecond
	DefaultLockTimeout   = 10 * time.Second
)

// JSONLOptions configure a [JSONL] sink. A nil *JSONLOptions, and every zero field, means the
// documented default.
type JSONLOptions struct {
	// Durability says when Write returns. Default: DurabilitySync.
	Durability Durability
	// MaxFileSize is the size in bytes after which the active file is rotated: before a record
	// that would take it past MaxFileSize, the file is renamed to "<path>.<n>" (n = 000001,
	// 000002, ...) and a new one started; the chain runs on across files. A record is never
	// split, so a file may exceed the size by less than one line when it holds a single record.
	// Default: DefaultMaxFileSize (64 MiB); negative: never rotate.
	MaxFileSize int64
	// Shared lets several processes append to the log at once: every Write takes an flock on
	// "<path>.lock", picks up the records and rotations other processes made, and appends.
	// Without it the sink holds that lock from Open to Close, and a second writer's Open fails
	// with ErrInUse. A Shared writer waits (up to LockTimeout) while a non-shared one holds
	// the lock.
	// Shared writes are slower (a lock, two stats, and rereading the last line when another
	// process appended) and are never buffered in memory. Default: false.
	Shared bool
	// LockTimeout bounds how long a Shared writer waits for the lock (in OpenJSONL and in
	// each Write, besides the Write's context) before it fails with ErrInUse.
	// Default: DefaultLockTimeout (10 s).
	LockTimeout time.Duration
	// Redact rewrites each record before it is encoded. Default: RedactSecrets (which the sink
	// applies as it encodes the record, scanning each field it masks once, with the same
	// result).
	Redact Redactor
	// KeepSecrets turns redaction off (Redact is then ignored). Default: false.
	KeepSecrets bool
	// BufferSize is how many bytes of whole lines DurabilityBuffered collects before it writes
	// them; the sink holds at most three such buffers. Default: DefaultBufferSize (64 KiB).
	BufferSize int
	// FlushInterval is how long DurabilityBuffered keeps a record in memory at most before
	// writing it. Default: DefaultFlushInterval (100 ms); negative: only when the buffer fills
	// and on Flush and Close.
	FlushInterval time.Duration
	// Perm is the permission of files the sink creates. Default: 0600.
	Perm os.FileMode
	// Clock gives the time of the recovery records the sink writes. Default: time.Now.
	Clock func() time.Time
}

// Errors of the JSONL sink.
var (
	// ErrClosed is returned by Write on a closed sink.
	ErrClosed = errors.New("audit: sink is closed")
	// ErrInUse is returned by OpenJSONL when another writer holds the log (named apart from
	// checkpoint.ErrLocked, a workspace lock).
	ErrInUse = errors.New("audit: log is in use by another writer")
)

// JSONL is a [Sink] that appends records to a file, one JSON object per line, with a SHA-256
// hash chain: every record carries seq (its position), prev (the previous record's hash) and
// hash (the SHA-256 of its canonical encoding, see [AppendJSON]). Editing, deleting, inserting
// or reordering lines breaks the chain, and [Verify] finds where.
//
// Each record is one write(2) of one whole line to a file opened with O_APPEND, so a crash
// leaves at most a torn last line; [OpenJSONL] truncates it and writes a recovery record
// before appending. (DurabilityBuffered writes several whole lines per write(2).)
//
// A JSONL is safe for concurrent use. It holds files and, with DurabilityBuffered, a timer and
// a goroutine: Close it.
type JSONL struct {
	path     string
	opts     JSONLOptions
	maxSize  int64
	bufSize  int
	interval time.Duration
	clock    func() time.Time
	redact   Redactor // nil: RedactSecrets, unless noRedact
	noRedact bool

	mu    sync.Mutex
	lockf *os.File     // "<path>.lock", flocked
	f     *os.File     // the active file (the chainer's while batches are in flight)
	end   int64        // the active file's size as the sink last saw it (the chainer's while batches are in flight)
	seq   uint64       // the chain's last record
	prev  Digest       // its hash; DurabilityBuffered: the hash of the last record chained (the chainer's while batches are in flight)
	line  []byte       // encoding scratch
	enc   chainEncoder // encoding scratch of appendLocked

	encMu   sync.Mutex
	encFree []*chainEncoder // encoders of finished Writes, for reuse

	// DurabilityBuffered without Shared: a pipeline. Writers encode outside the lock and append
	// their lines, with seq set and prev and hash still blank, to pending; a full pending
	// becomes a batch queued for the chainer goroutine, which fills in prev and hash record by
	// record (the only hashing of a record's bytes) and writes the batch, while writers fill the
	// next. Up to maxInFlight batches wait or are being chained, so the chainer finds its next
	// batch ready instead of waiting for a writer to be scheduled.
	pending   []byte           // whole lines not yet handed to the chainer or written
	pendLines []lineSlot       // the lines of pending
	inFlight  int              // batches handed to the chainer and not yet back from it
	flightEnd int64            // the file's size once the chainer is through them
	spare     []*chainBatch    // batches back from the chainer, for reuse
	work      chan *chainBatch // batches for the chainer, in chain order
	done      chan *chainBatch // batches the chainer is through, with its error
	exited    chan struct{}    // closed when the chainer returns

	timer   *time.Timer
	err     error // sticky: the log's state is unknown after it
	closed  bool
	written atomic.Uint64 // DurabilityGroup: records written so far (tickets); written under mu
	fsyncs  atomic.Uint64 // fsyncs of the active file, for benchmarks (records per fsync)

	fileMu sync.RWMutex // read-held across a group fsync of f; write-held to replace f

	gmu     sync.Mutex
	synced  uint64        // tickets known durable
	round   chan struct{} // closed when the fsync in progress ends
	syncErr error
}

// OpenJSONL opens (creating it if needed) the JSONL log at path for appending. The directory
// must exist. It recovers the log's tail: a torn last line (a write a crash interrupted, never
// an acknowledged record) is truncated and a [KindRecovery] record says so; a last line that
// is complete but damaged is an error, since appending after it would vouch for it.
func OpenJSONL(path string, opts *JSONLOptions) (*JSONL, error) {
	s := &JSONL{path: path}
	if opts != nil {
		s.opts = *opts
	}
	o := &s.opts
	if int(o.Durability) >= len(durabilityNames) {
		return nil, fmt.Errorf("audit: JSONLOptions.Durability: invalid value %d", uint8(o.Durability))
	}
	if o.BufferSize < 0 {
		return nil, fmt.Errorf("audit: JSONLOptions.BufferSize %d is negative", o.BufferSize)
	}
	if o.Perm&^os.ModePerm != 0 {
		return nil, fmt.Errorf("audit: JSONLOptions.Perm %v has bits besides the permission bits", o.Perm)
	}
	s.maxSize = o.MaxFileSize
	if s.maxSize == 0 {
		s.maxSize = DefaultMaxFileSize
	}
	s.bufSize = o.BufferSize
	if s.bufSize == 0 {
		s.bufSize = DefaultBufferSize
	}
	s.interval = o.FlushInterval
	if s.interval == 0 {
		s.interval = DefaultFlushInterval
	}
	if o.Perm == 0 {
		o.Perm = 0o600
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	s.clock = o.Clock
	if s.clock == nil {
		s.clock = time.Now
	}
	s.redact, s.noRedact = o.Redact, o.KeepSecrets
	if path == "" {
		return nil, errors.New("audit: OpenJSONL: empty path")
	}

	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, o.Perm)
	if err != nil {
		return nil, fmt.Errorf("audit: opening the lock file: %w", err)
	}
	s.lockf = lf
	if o.Shared {
		err = lock(context.Background(), lf, o.LockTimeout)
	} else {
		var ok bool
		ok, err = tryLock(lf)
		if err == nil && !ok {
			err = fmt.Errorf("%w: %s is locked (lock file %s); open every writer with Shared to append from several processes", ErrInUse, path, lf.Name())
		}
	}
	if err != nil {
		lf.Close()
		return nil, err
	}
	err = s.openActive()
	if err == nil {
		err = s.loadTail()
	}
	if err == nil && s.opts.Durability != DurabilityBuffered {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		if s.f != nil {
			s.f.Close()
		}
		lf.Close() // closing the descriptor releases the flock
		return nil, err
	}
	if o.Shared {
		if err := unlock(lf); err != nil {
			s.f.Close()
			lf.Close()
			return nil, err
		}
	}
	if s.piped() {
		s.work, s.done, s.exited = make(chan *chainBatch, maxInFlight), make(chan *chainBatch, maxInFlight), make(chan struct{})
		go s.chainer()
		if s.interval > 0 {
			s.timer = time.AfterFunc(time.Hour, s.timerFlush)
			s.timer.Stop()
		}
	}
	return s, nil
}

// piped reports whether the sink runs the DurabilityBuffered pipeline (see pending).
func (s *JSONL) piped() bool { return s.opts.Durability == DurabilityBuffered && !s.opts.Shared }

// Path returns the path of the active file.
func (s *JSONL) Path() string { return s.path }

// Head returns the sequence number and hash of the last record in the chain (0 and the zero
// Digest for an empty log). Keeping the head somewhere an attacker cannot write (another host,
// a signed note) is what makes truncating the tail of the log detectable.
func (s *JSONL) Head() (uint64, Digest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.piped() {
		return s.seq, s.prev
	}
	// Chain the pending lines in place without writing them; when they are handed on, they are
	// chained again from the same head, to the same bytes.
	s.waitChainer()
	return s.seq, chainLines(s.pending, s.pendLines, s.prev)
}

// Write appends r to the log: it redacts r, sets its time to UTC, fills Seq, Prev and Hash,
// and writes its line. It returns once the record is as durable as the sink's Durability
// promises; an error means the record may not have been kept. After a failure that leaves the
// file in an unknown state (a failed fsync, a partial write that could not be undone), every
// later Write fails too until the log is reopened.
func (s *JSONL) Write(ctx context.Context, r Record) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit: %s: %w", s.path, err)
	}
	// The default redaction happens as the record is encoded (see appendJSON).
	redact := !s.noRedact && s.redact == nil
	if !s.noRedact && s.redact != nil {
		r = redactCopy(s.redact, r)
	}
	r.Time = r.Time.UTC()
	e := s.getEncoder()
	defer s.putEncoder(e)
	// Encode, and for the modes that chain under the lock hash the bytes before the chain
	// fields, before taking the lock, so that concurrent writers share the work across cores.
	if err := e.encode(&r, !s.piped(), redact); err != nil {
		return fmt.Errorf("audit: %s: %w", s.path, err)
	}
	s.mu.Lock()
	ticket, err := s.append(ctx, e)
	s.mu.Unlock()
	if err != nil || ticket == 0 {
		return err
	}
	return s.waitDurable(ctx, ticket)
}

// append writes the record e encoded (with s.mu held). For DurabilityGroup it returns the
// ticket to wait for.
func (s *JSONL) append(ctx context.Context, e *chainEncoder) (uint64, error) {
	if s.closed {
		return 0, fmt.Errorf("%w: %s", ErrClosed, s.path)
	}
	if s.err != nil {
		return 0, s.err
	}
	if s.opts.Shared {
		if err := lock(ctx, s.lockf, s.opts.LockTimeout); err != nil {
			return 0, err
		}
		defer func() {
			if err := unlock(s.lockf); err != nil && s.err == nil {
				s.err = fmt.Errorf("audit: %s: %w", s.path, err)
			}
		}()
		if err := s.refresh(); err != nil {
			return 0, err
		}
	}
	return s.appendLocked(e)
}

// appendLocked appends the record e encoded after the chain's head (s.mu and, when Shared, the
// flock held): DurabilityBuffered without Shared puts it in pending; the other modes finish its
// hash and write it.
func (s *JSONL) appendLocked(e *chainEncoder) (uint64, error) {
	if s.piped() {
		return 0, s.appendPending(e)
	}
	seq := s.seq + 1
	h := e.finish(seq, s.prev)
	if n := e.lineLen(); n > MaxLineSize {
		return 0, fmt.Errorf("audit: %s: record %d is %d bytes, more than MaxLineSize", s.path, seq, n)
	}
	if s.maxSize > 0 && s.end > 0 && s.end+int64(e.lineLen()) > s.maxSize {
		if err := s.rotate(); err != nil {
			return 0, err
		}
	}
	line := e.appendLine(s.line[:0])
	s.line = line[:0]
	if err := s.writeLocked(line); err != nil {
		return 0, err
	}
	s.seq, s.prev = seq, h
	switch s.opts.Durability {
	case DurabilitySync:
		if err := fdatasync(s.f); err != nil {
			s.err = fmt.Errorf("audit: %s: the log's durability is unknown after a failed fsync, reopen it: %w", s.path, err)
			return 0, s.err
		}
	case DurabilityGroup:
		return s.written.Add(1), nil
	}
	return 0, nil
}

// appendPending appends the record e encoded to pending, with its seq and blanks for prev and
// hash, and hands pending to the chainer once it holds BufferSize bytes.
func (s *JSONL) appendPending(e *chainEncoder) error {
	seq := s.seq + 1
	n := e.pendingLen(seq)
	if n > MaxLineSize {
		return fmt.Errorf("audit: %s: record %d is %d bytes, more than MaxLineSize", s.path, seq, n)
	}
	if cur := s.fileEnd() + int64(len(s.pending)); s.maxSize > 0 && cur > 0 && cur+int64(n) > s.maxSize {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	first := len(s.pending) == 0
	s.pending = e.appendPending(s.pending, seq)
	s.pendLines = append(s.pendLines, lineSlot{end: len(s.pending), prev: seq > 1})
	s.seq = seq
	if len(s.pending) >= s.bufSize {
		return s.handOff()
	}
	if first && s.timer != nil {
		s.timer.Reset(s.interval)
	}
	return nil
}

// fileEnd is the size the active file has once the chainer is through (s.mu held).
func (s *JSONL) fileEnd() int64 {
	if s.inFlight > 0 {
		return s.flightEnd
	}
	return s.end
}

// lineSlot is a line of a batch: where it ends (after its newline) and whether it has a prev.
type lineSlot struct {
	end  int
	prev bool
}

// chainBatch is a batch of pending lines on its way through the chainer.
type chainBatch struct {
	b     []byte
	lines []lineSlot
	err   error // the chainer's
}

// maxInFlight bounds the batches queued for or held by the chainer. Two let the chainer start
// the next batch the moment it is through one while the writers, ahead of it, wait to be
// scheduled. Acknowledged records in memory are at most (maxInFlight+1) × BufferSize bytes.
const maxInFlight = 2

// received takes back a batch the chainer is through (s.mu held). A batch it could not write
// lost acknowledged records, so the sink fails from then on.
func (s *JSONL) received(c *chainBatch) {
	s.inFlight--
	if err := c.err; err != nil && s.err == nil {
		s.err = fmt.Errorf("%w (buffered records were lost; reopen the log)", err)
	}
	c.err = nil
	s.spare = append(s.spare, c)
}

// waitChainer waits until the chainer is through every batch (s.mu held) and returns the
// sink's error.
func (s *JSONL) waitChainer() error {
	for s.inFlight > 0 {
		s.received(<-s.done)
	}
	return s.err
}

// handOff queues pending for the chainer (s.mu held), first waiting for a batch to come back
// if maxInFlight are out.
func (s *JSONL) handOff() error {
	for drained := false; s.inFlight > 0 && !drained; {
		select {
		case c := <-s.done:
			s.received(c)
		default:
			drained = true
		}
	}
	if s.inFlight == maxInFlight {
		s.received(<-s.done)
	}
	if s.err != nil {
		return s.err
	}
	if len(s.pending) == 0 {
		return nil
	}
	var c *chainBatch
	if n := len(s.spare); n > 0 {
		c, s.spare = s.spare[n-1], s.spare[:n-1]
	} else {
		c = new(chainBatch)
	}
	s.flightEnd = s.fileEnd() + int64(len(s.pending))
	c.b, s.pending = s.pending, c.b[:0]
	c.lines, s.pendLines = s.pendLines, c.lines[:0]
	s.inFlight++
	s.work <- c
	return nil
}

// chainer chains and writes the batches handOff gives it, in order, until Close closes work.
// After a batch fails it writes none of the later ones: they would follow a gap in the chain.
func (s *JSONL) chainer() {
	defer close(s.exited)
	var failed error
	for c := range s.work {
		if failed != nil {
			c.err = failed
		} else {
			c.err = s.chainAndWrite(c.b, c.lines)
			failed = c.err
		}
		s.done <- c
	}
}

// chainAndWrite fills in prev and hash of the lines of b after the chain's head s.prev and
// writes them (s.mu held with nothing in flight, or by the chainer, which owns these fields
// while batches are in flight).
func (s *JSONL) chainAndWrite(b []byte, lines []lineSlot) error {
	if len(lines) > 0 && lines[0].prev == s.prev.IsZero() {
		return fmt.Errorf("audit: %s: bug: a buffered line's prev does not match the chain", s.path)
	}
	s.prev = chainLines(b, lines, s.prev)
	err, _ := s.writeLines(b)
	return err
}

// chainLines fills in prev and hash of the lines of b, blank as appendPending left them, after a
// record whose hash is prev, and returns the hash of the last. It hashes each record's bytes once:
// the line's bytes up to the hash field, and a closing brace.
func chainLines(b []byte, lines []lineSlot, prev Digest) Digest {
	start := 0
	var prevHex []byte // prev in hex, as the line before holds it
	for _, l := range lines {
		line := b[start:l.end]
		at := len(line) - 1 - hashSuffixLen // the ',' of `,"hash":"`
		if l.prev {
			if dst := line[at-1-2*len(prev) : at-1]; prevHex != nil {
				copy(dst, prevHex)
			} else {
				hex.Encode(dst, prev[:])
			}
		}
		line[at] = '}'
		prev = sha256.Sum256(line[:at+1])
		line[at] = ','
		prevHex = line[at+len(`,"hash":"`) : at+len(`,"hash":"`)+2*len(prev)]
		hex.Encode(prevHex, prev[:])
		start = l.end
	}
	return prev
}

// chainEncoder encodes a record for the chain outside the sink's lock: encode writes everything
// but the chain fields and, when asked, hashes those bytes; under the lock, finish adds seq and
// prev to the same hash (the record's bytes are hashed once, as one stream, and the result
// equals appendChained's), or appendPending writes the line with blanks for the chainer.
type chainEncoder struct {
	body []byte // the canonical encoding with Seq, Prev and Hash zero, without its closing '}'
	tail []byte // `,"seq":N,"prev":"<hex>"}`: the rest of the hashed bytes
	h    hash.Hash
	sum  Digest
	st   encState
}

// maxFreeEncoders bounds the encoders a JSONL keeps for reuse (one per concurrent writer).
const maxFreeEncoders = 64

// getEncoder returns an encoder for one Write: a free one, or a new one. (A sync.Pool would do,
// but drops entries at random under the race detector; a short free list keeps Write
// allocation-free after warm-up in every build.)
func (s *JSONL) getEncoder() *chainEncoder {
	s.encMu.Lock()
	defer s.encMu.Unlock()
	if n := len(s.encFree); n > 0 {
		e := s.encFree[n-1]
		s.encFree = s.encFree[:n-1]
		return e
	}
	return &chainEncoder{h: sha256.New()}
}

func (s *JSONL) putEncoder(e *chainEncoder) {
	s.encMu.Lock()
	defer s.encMu.Unlock()
	if len(s.encFree) < maxFreeEncoders {
		s.encFree = append(s.encFree, e)
	}
}

// encode encodes r (whose chain fields it clears; redacted as RedactSecrets does if redact) and,
// if hash, hashes the bytes that precede the chain fields.
func (e *chainEncoder) encode(r *Record, hash, redact bool) error {
	r.Seq, r.Prev, r.Hash = 0, Digest{}, Digest{}
	body, err := appendJSON(e.body[:0], r, &e.st, redact)
	if err != nil {
		e.body = body[:0]
		return err
	}
	e.body = body[:len(body)-1] // the '}' comes after the chain fields
	if hash {
		if e.h == nil {
			e.h = sha256.New()
		}
		e.h.Reset()
		e.h.Write(e.body)
	}
	return nil
}

// finish completes the hash with the chain fields seq and prev and returns it.
func (e *chainEncoder) finish(seq uint64, prev Digest) Digest {
	t := append(e.tail[:0], `,"seq":`...)
	t = strconv.AppendUint(t, seq, 10)
	if !prev.IsZero() {
		t = append(t, `,"prev":"`...)
		t = hex.AppendEncode(t, prev[:])
		t = append(t, '"')
	}
	t = append(t, '}')
	e.tail = t
	e.h.Write(t)
	e.h.Sum(e.sum[:0])
	return e.sum
}

// lineLen is the length of the line appendLine writes, newline included.
func (e *chainEncoder) lineLen() int { return len(e.body) + len(e.tail) - 1 + hashSuffixLen + 1 }

// appendLine appends the chained line: the hashed bytes with the hash inserted before the
// closing brace, and a newline.
func (e *chainEncoder) appendLine(dst []byte) []byte {
	dst = append(dst, e.body...)
	dst = append(dst, e.tail[:len(e.tail)-1]...)
	dst = append(dst, `,"hash":"`...)
	dst = hex.AppendEncode(dst, e.sum[:])
	return append(dst, '"', '}', '\n')
}

// blankPrev and blankHash are the chain fields appendPending writes for the chainer to fill in.
const (
	blankPrev = `,"prev":"` + blank64 + `"`
	blankHash = `,"hash":"` + blank64 + `"}` + "\n"
	blank64   = "0000000000000000000000000000000000000000000000000000000000000000"
)

// pendingLen is the length of the line appendPending writes for seq, newline included.
func (e *chainEncoder) pendingLen(seq uint64) int {
	n := len(e.body) + len(`,"seq":`) + decimalLen(seq) + len(blankHash)
	if seq > 1 {
		n += len(blankPrev)
	}
	return n
}

// appendPending appends the record's line with seq and with blanks for prev (absent for seq 1)
// and hash.
func (e *chainEncoder) appendPending(dst []byte, seq uint64) []byte {
	dst = append(dst, e.body...)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	if seq > 1 {
		dst = append(dst, blankPrev...)
	}
	return append(dst, blankHash...)
}

func decimalLen(n uint64) int {
	l := 1
	for ; n >= 10; n /= 10 {
		l++
	}
	return l
}

// writeLocked writes b (whole lines) in one write(2). If the write fails part way, it truncates
// the file back so no torn line stays behind; if it cannot, the sink fails from now on.
func (s *JSONL) writeLocked(b []byte) error {
	err, sticky := s.writeLines(b)
	if sticky {
		s.err = err
	}
	return err
}

// writeLines is writeLocked without setting the sticky error: sticky says whether err leaves
// the file in an unknown state.
func (s *JSONL) writeLines(b []byte) (err error, sticky bool) {
	n, err := s.f.Write(b)
	if err == nil {
		s.end += int64(n)
		return nil, false
	}
	err = fmt.Errorf("audit: writing %s: %w", s.path, err)
	if n > 0 {
		if terr := s.f.Truncate(s.end); terr != nil {
			return fmt.Errorf("%w; removing the partial line failed too (%v), reopen the log", err, terr), true
		}
	}
	return err, false
}

// flushLocked writes the records of DurabilityBuffered not written yet: it waits for the
// chainer, then chains and writes pending itself. Those records were acknowledged, so failing
// to write them leaves the chain with a gap: the sink fails from now on.
func (s *JSONL) flushLocked() error {
	if !s.piped() {
		return nil
	}
	if err := s.waitChainer(); err != nil {
		return err
	}
	if len(s.pending) == 0 {
		return nil
	}
	err := s.chainAndWrite(s.pending, s.pendLines)
	s.pending, s.pendLines = s.pending[:0], s.pendLines[:0]
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("%w (buffered records were lost; reopen the log)", err)
	}
	return err
}

func (s *JSONL) timerFlush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		_ = s.handOff() // a failure is sticky and reported by the next Write
	}
}

// Flush writes the records DurabilityBuffered holds in memory and fsyncs the active file, so
// every record written so far is durable.
func (s *JSONL) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit: %s: %w", s.path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%w: %s", ErrClosed, s.path)
	}
	return s.syncAllLocked()
}

func (s *JSONL) syncAllLocked() error {
	if s.err != nil {
		return s.err
	}
	if err := s.flushLocked(); err != nil {
		return err
	}
	if err := fdatasync(s.f); err != nil {
		s.err = fmt.Errorf("audit: %s: the log's durability is unknown after a failed fsync, reopen it: %w", s.path, err)
		return s.err
	}
	s.markSynced()
	return nil
}

// markSynced records that every ticket written so far is durable (s.mu held).
func (s *JSONL) markSynced() {
	s.gmu.Lock()
	s.synced = max(s.synced, s.written.Load())
	s.gmu.Unlock()
}

// Close writes what is buffered, fsyncs, and releases the files and the lock. Later Writes
// return ErrClosed. Closing twice is not an error.
func (s *JSONL) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	var errs []error
	if s.f != nil {
		if s.opts.Shared && len(s.pending) > 0 {
			errs = append(errs, errors.New("audit: bug: shared sink holds buffered records"))
		}
		if err := s.syncAllLocked(); err != nil {
			errs = append(errs, err)
		}
	}
	s.closed = true
	if s.work != nil {
		_ = s.waitChainer() // batches are out only when syncAllLocked failed early
		close(s.work)
		<-s.exited
	}
	s.fileMu.Lock()
	if s.f != nil {
		errs = append(errs, s.f.Close())
	}
	s.fileMu.Unlock()
	errs = append(errs, s.lockf.Close())
	return errors.Join(errs...)
}

// waitDurable returns once ticket is durable: the first waiter without an fsync in progress
// runs one for everyone written so far; the others wait for it (group commit).
func (s *JSONL) waitDurable(ctx context.Context, ticket uint64) error {
	for {
		s.gmu.Lock()
		if s.synced >= ticket {
			s.gmu.Unlock()
			return nil
		}
		if s.syncErr != nil {
			err := s.syncErr
			s.gmu.Unlock()
			return err
		}
		if ch := s.round; ch != nil {
			s.gmu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return fmt.Errorf("audit: %s: waiting for the group fsync: %w", s.path, ctx.Err())
			}
		}
		ch := make(chan struct{})
		s.round = ch
		s.gmu.Unlock()

		// Let the writers woken by the previous round append their next records before
		// this round picks its target, so that one fsync covers them all: yield while the
		// batch keeps growing (a few times at most). With nothing else runnable this
		// returns at once.
		for n, i := s.written.Load(), 0; i < 4; i++ {
			runtime.Gosched()
			m := s.written.Load()
			if m == n {
				break
			}
			n = m
		}
		target, err := s.syncRound()
		s.gmu.Lock()
		if err != nil && s.syncErr == nil {
			s.syncErr = err
		}
		if err == nil {
			s.synced = max(s.synced, target)
		}
		s.round = nil
		close(ch)
		s.gmu.Unlock()
	}
}

// syncRound fsyncs the active file without holding s.mu, so writers fill the next batch
// meanwhile. It returns the ticket that is durable once the fsync has returned.
func (s *JSONL) syncRound() (uint64, error) {
	s.mu.Lock()
	target, f, closed := s.written.Load(), s.f, s.closed
	if closed || s.err != nil {
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return 0, err
		}
		return target, nil // Close synced everything
	}
	s.fileMu.RLock()
	s.mu.Unlock()
	err := fdatasync(f)
	s.fileMu.RUnlock()
	s.fsyncs.Add(1)
	if err != nil {
		err = fmt.Errorf("audit: %s: the log's durability is unknown after a failed fsync, reopen it: %w", s.path, err)
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	return target, err
}

// openActive opens (creating) the active file for appending.
func (s *JSONL) openActive() error {
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, s.opts.Perm)
	if err != nil {
		return fmt.Errorf("audit: opening the log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("audit: %s is not a regular file (%v)", s.path, fi.Mode().Type())
	}
	s.f = f
	s.end = fi.Size()
	return nil
}

// replaceFile makes nf the active file; the old one is fsynced (unless already) and closed.
func (s *JSONL) replaceFile(nf *os.File, oldSynced bool) error {
	s.fileMu.Lock()
	old := s.f
	s.f = nf
	s.fileMu.Unlock()
	var err error
	if !oldSynced && s.opts.Durability != DurabilityBuffered {
		if err = fdatasync(old); err != nil {
			s.err = fmt.Errorf("audit: %s: the log's durability is unknown after a failed fsync, reopen it: %w", s.path, err)
			err = s.err
		}
	}
	old.Close()
	if err == nil {
		s.markSynced()
	}
	return err
}

// refresh picks up what other processes did since this sink last held the lock: a rotation
// (the active file is another one) and appended records (its size changed).
func (s *JSONL) refresh() error {
	cur, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	fi, err := os.Stat(s.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("audit: %w", err)
	}
	if err != nil || !os.SameFile(fi, cur) {
		old := s.f
		if err := s.openActive(); err != nil {
			s.f = old
			return err
		}
		nf := s.f
		s.f = old
		if err := s.replaceFile(nf, false); err != nil {
			return err
		}
		return s.loadTail()
	}
	if cur.Size() != s.end {
		s.end = cur.Size()
		return s.loadTail()
	}
	return nil
}

// loadTail sets the chain's head from the last record of the log, truncating a torn last line
// of the active file first (and recording that it did).
func (s *JSONL) loadTail() error {
	fi, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	s.end = fi.Size()
	t, err := readTail(s.f, s.end)
	if err != nil {
		return err
	}
	var tornNote string
	if t.tornOff < s.end {
		torn := make([]byte, s.end-t.tornOff)
		if _, err := s.f.ReadAt(torn, t.tornOff); err != nil {
			return fmt.Errorf("audit: reading the torn last line of %s: %w", s.path, err)
		}
		if err := s.f.Truncate(t.tornOff); err != nil {
			return fmt.Errorf("audit: truncating the torn last line of %s: %w", s.path, err)
		}
		tornNote = fmt.Sprintf("truncated a torn last line of %d bytes (sha256 %x) at offset %d of %s, left by an interrupted write; it was never acknowledged",
			len(torn), sha256.Sum256(torn), t.tornOff, filepath.Base(s.path))
		s.end = t.tornOff
	}
	if t.last != nil {
		r, err := t.head(s.f, s.path)
		if err != nil {
			return err
		}
		s.seq, s.prev = r.Seq, r.Hash
	} else if err := s.headFromRotated(); err != nil {
		return err
	}
	if tornNote == "" {
		return nil
	}
	id, _ := uuid.NewV7()
	rec := Record{Time: s.clock().UTC(), Kind: KindRecovery, DecisionID: id, CorrelationID: id, Reason: tornNote}
	if err := s.enc.encode(&rec, !s.piped(), false); err != nil {
		return fmt.Errorf("audit: %s: %w", s.path, err)
	}
	if _, err := s.appendLocked(&s.enc); err != nil {
		return err
	}
	switch s.opts.Durability {
	case DurabilityGroup:
		if err := fdatasync(s.f); err != nil {
			return fmt.Errorf("audit: %s: %w", s.path, err)
		}
		s.markSynced()
	case DurabilityBuffered:
		return s.flushLocked()
	}
	return nil
}

// headFromRotated sets the chain's head from the last record of the newest rotated file (or
// to the start of a chain if there is none), for an empty active file.
func (s *JSONL) headFromRotated() error {
	s.seq, s.prev = 0, Digest{}
	files, err := rotatedFiles(s.path)
	if err != nil || len(files) == 0 {
		return err
	}
	name := files[len(files)-1]
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	t, err := readTail(f, fi.Size())
	if err != nil {
		return err
	}
	if t.tornOff < fi.Size() || t.last == nil {
		return fmt.Errorf("audit: %s: the rotated file does not end with a complete record (run Verify)", name)
	}
	r, err := t.head(f, name)
	if err != nil {
		return err
	}
	s.seq, s.prev = r.Seq, r.Hash
	return nil
}

// head parses the last record of the tail of file f (called name) and checks that it carries
// its own hash and follows the record before it, if the file holds one. It is the check a sink
// makes before appending; Verify checks the whole chain.
func (t *tail) head(f io.ReaderAt, name string) (Record, error) {
	damaged := func(line int, err error) error {
		return fmt.Errorf("audit: %s line %d: the log's last records are damaged, so nothing can be appended after them (run Verify): %w",
			name, line, err)
	}
	r, err := parseChained(t.last)
	if err != nil {
		return Record{}, damaged(countLines(f, t.lastOff)+1, err)
	}
	if t.before != nil {
		p, err := parseChained(t.before)
		if err != nil {
			return Record{}, damaged(countLines(f, t.lastOff), err)
		}
		if r.Prev != p.Hash || r.Seq != p.Seq+1 {
			return Record{}, damaged(countLines(f, t.lastOff)+1,
				fmt.Errorf("%w: the last record does not follow the one before it (seq %d after %d)", ErrBrokenChain, r.Seq, p.Seq))
		}
	}
	return r, nil
}

// rotate renames the active file to the next "<path>.<n>" and starts a new one (s.mu and, when
// Shared, the flock held).
func (s *JSONL) rotate() error {
	if err := s.flushLocked(); err != nil {
		return err
	}
	synced := false
	if s.opts.Durability != DurabilityBuffered {
		if err := fdatasync(s.f); err != nil {
			s.err = fmt.Errorf("audit: %s: the log's durability is unknown after a failed fsync, reopen it: %w", s.path, err)
			return s.err
		}
		synced = true
	}
	files, err := rotatedFiles(s.path)
	if err != nil {
		return err
	}
	n := 1
	if len(files) > 0 {
		n, _ = rotatedIndex(s.path, files[len(files)-1])
		n++
	}
	name := fmt.Sprintf("%s.%06d", s.path, n)
	if err := renameNoReplace(s.path, name); err != nil {
		return fmt.Errorf("audit: rotating the log: %w", err)
	}
	nf, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, s.opts.Perm)
	if err != nil {
		// The records so far are in the rotated file; the next write must start a new one.
		s.err = fmt.Errorf("audit: rotating the log: creating %s: %w (reopen the log)", s.path, err)
		return s.err
	}
	if s.opts.Durability != DurabilityBuffered {
		if err := syncDir(filepath.Dir(s.path)); err != nil {
			nf.Close()
			s.err = fmt.Errorf("audit: rotating the log: %w (reopen the log)", err)
			return s.err
		}
	}
	if err := s.replaceFile(nf, synced); err != nil {
		return err
	}
	s.end = 0
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("audit: fsync of directory %s: %w", dir, err)
	}
	return nil
}

// linkRename renames by linking and unlinking, which fails if newpath exists.
func linkRename(oldpath, newpath string) error {
	if err := os.Link(oldpath, newpath); err != nil {
		return err
	}
	return os.Remove(oldpath)
}

// parseChained parses a line and checks that it carries the hash of its own content.
func parseChained(line []byte) (Record, error) {
	r, err := ParseJSON(line)
	if err != nil {
		return Record{}, err
	}
	if r.Seq == 0 {
		return Record{}, errors.New("the record has no seq: it is not part of a chain")
	}
	if err := verifyHash(line, &r); err != nil {
		return Record{}, err
	}
	return r, nil
}

// tail is the end of a file: its last complete line (without the newline) at lastOff, the line
// before it, and where the torn bytes after it start (tornOff == size when the file ends with a
// newline).
type tail struct {
	last    []byte
	lastOff int64
	before  []byte // the line before last, if the file has one
	tornOff int64
}

// readTail finds the last two complete lines of f (of the given size) and any torn bytes after
// them, reading backwards from the end.
func readTail(f io.ReaderAt, size int64) (tail, error) {
	if size == 0 {
		return tail{}, nil
	}
	for window := int64(64 << 10); ; window *= 2 {
		window = min(window, size)
		base := size - window
		buf := make([]byte, window)
		if _, err := f.ReadAt(buf, base); err != nil {
			return tail{}, fmt.Errorf("audit: reading the end of the log: %w", err)
		}
		t := tail{tornOff: size}
		end := len(buf)
		if buf[end-1] != '\n' {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 && base > 0 {
				if window > 2*MaxLineSize {
					return tail{}, errors.New("audit: the last line of the log is longer than MaxLineSize")
				}
				continue
			}
			t.tornOff = base + int64(i) + 1
			end = i + 1
		}
		if end == 0 {
			return t, nil // only torn bytes
		}
		j := bytes.LastIndexByte(buf[:end-1], '\n')
		k := -1
		if j > 0 {
			k = bytes.LastIndexByte(buf[:j], '\n')
		}
		if (j < 0 || k < 0 && j > 0) && base > 0 {
			if window > 4*MaxLineSize {
				return tail{}, errors.New("audit: the last lines of the log are longer than MaxLineSize")
			}
			continue
		}
		t.last = buf[j+1 : end-1]
		t.lastOff = base + int64(j) + 1
		if j > 0 {
			t.before = buf[k+1 : j]
		}
		return t, nil
	}
}

// countLines counts the newlines before offset off of f (for error messages).
func countLines(f io.ReaderAt, off int64) int {
	buf := make([]byte, 64<<10)
	n := 0
	for pos := int64(0); pos < off; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		n += bytes.Count(buf[:k], []byte{'\n'})
		pos += int64(k)
		if err != nil {
			break
		}
	}
	return n
}

var _ Sink = (*JSONL)(nil)
