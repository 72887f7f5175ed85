package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// Bounds of the record of what a snapshot did not cover.
const (
	maxUncoveredEntries = 1 << 20
	maxUncoveredBytes   = 64 << 20
)

// The record of what a snapshot did not cover is stored with every
// checkpoint (metadata version 2): a blob listing, as work-tree paths, the
// files that existed but were left out (ignored, protected, above the
// size cap, special files) and, ending in "/", the directories left out as
// a whole (ignored directories, nested repositories). A restore never
// deletes a path that its target did not cover, whatever changed since:
// ignore rules edited or deleted, a nested repository's .git removed. The
// blob is kept reachable by a parent commit whose tree holds it, so that
// git's garbage collection keeps it exactly as long as the checkpoint.

// uncoveredName is the blob's name in the record commit's tree.
const uncoveredName = "uncovered"

// encodeUncovered renders the list sorted, unique, NUL-terminated.
func encodeUncovered(list []string) ([]byte, error) {
	list = slices.Clone(list)
	slices.Sort(list)
	list = slices.Compact(list)
	if len(list) > maxUncoveredEntries {
		return nil, fmt.Errorf("checkpoint: %d paths are left out of the snapshot (ignored, nested repositories, skipped), at most %d can be recorded; exclude whole directories instead", len(list), maxUncoveredEntries)
	}
	var b bytes.Buffer
	for _, p := range list {
		b.WriteString(p)
		b.WriteByte(0)
	}
	if b.Len() > maxUncoveredBytes {
		return nil, fmt.Errorf("checkpoint: the list of paths left out of the snapshot is %d bytes, at most %d can be recorded", b.Len(), maxUncoveredBytes)
	}
	return b.Bytes(), nil
}

// uncovered answers whether a path was left out of a snapshot.
type uncovered struct {
	known bool            // false for a checkpoint written before records existed
	files map[string]bool // work-tree paths
	dirs  map[string]bool // work-tree paths, without the trailing slash
}

func decodeUncovered(b []byte) (uncovered, error) {
	u := uncovered{known: true, files: map[string]bool{}, dirs: map[string]bool{}}
	if len(b) == 0 {
		return u, nil
	}
	if b[len(b)-1] != 0 {
		return u, fmt.Errorf("record of uncovered paths: not NUL-terminated")
	}
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		p := string(b[:i])
		b = b[i+1:]
		if n++; n > maxUncoveredEntries {
			return u, fmt.Errorf("record of uncovered paths: more than %d entries", maxUncoveredEntries)
		}
		dir := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		if err := checkTreePath(p); err != nil {
			return u, fmt.Errorf("record of uncovered paths: %w", err)
		}
		if dir {
			u.dirs[p] = true
		} else {
			u.files[p] = true
		}
	}
	return u, nil
}

// excludes reports whether the work-tree path p was left out: p itself,
// or a directory above it.
func (u *uncovered) excludes(p string) bool {
	if !u.known {
		return false
	}
	if u.files[p] || u.dirs[p] {
		return true
	}
	if len(u.dirs) == 0 {
		return false
	}
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' && u.dirs[p[:i]] {
			return true
		}
	}
	return false
}

// blobOID is the object id git gives a blob with this content.
func (c *Checkpointer) blobOID(data []byte) string {
	header := "blob " + strconv.Itoa(len(data)) + "\x00"
	if len(c.zeroOID) == 64 {
		h := sha256.New()
		io.WriteString(h, header)
		h.Write(data)
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	io.WriteString(h, header)
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// loadUncovered reads a checkpoint's record; a checkpoint without one
// (metadata version 1) gives an empty, unknown record.
func (c *Checkpointer) loadUncovered(ctx context.Context, oid string) (uncovered, error) {
	if oid == "" {
		return uncovered{}, nil
	}
	if len(oid) != len(c.zeroOID) {
		return uncovered{}, fmt.Errorf("record of uncovered paths: object id %q has the wrong length", truncate(oid, 80))
	}
	if oid == c.blobOID(nil) {
		return decodeUncovered(nil)
	}
	if data, ok := c.records.get(oid); ok {
		return decodeUncovered(data)
	}
	if o := c.sess; o.usable() {
		objs, err := o.read([]string{oid}, "blob", maxUncoveredBytes, maxUncoveredBytes)
		if err != nil {
			return uncovered{}, fmt.Errorf("record of uncovered paths: %w", err)
		}
		data := objs[0].data
		if got := c.blobOID(data); got != oid {
			return uncovered{}, fmt.Errorf("record of uncovered paths: object %s hashes to %s", oid, got)
		}
		u, err := decodeUncovered(data)
		if err == nil {
			c.records.put(oid, data)
		}
		return u, err
	}
	s, err := c.git.Start(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Args: []string{"cat-file", "--batch"}})
	if err != nil {
		return uncovered{}, fmt.Errorf("record of uncovered paths: %w", err)
	}
	go func() {
		_, _ = io.WriteString(s.Stdin, oid+"\n")
		_ = s.Stdin.Close()
	}()
	data, rerr := readBoundedBlob(s.Stdout, oid, maxUncoveredBytes)
	werr := s.Wait()
	if rerr != nil {
		return uncovered{}, fmt.Errorf("record of uncovered paths: %w", rerr)
	}
	if werr != nil {
		return uncovered{}, fmt.Errorf("record of uncovered paths: %w", werr)
	}
	if got := c.blobOID(data); got != oid {
		return uncovered{}, fmt.Errorf("record of uncovered paths: object %s hashes to %s", oid, got)
	}
	u, err := decodeUncovered(data)
	if err == nil {
		c.records.put(oid, data)
	}
	return u, err
}

// recordCache keeps the most recent records this Checkpointer wrote or
// read, so that restoring a checkpoint taken by the same process (a
// batch's rollback) reads no object. Keyed by object id: an entry can
// only be the content that hashes to it.
type recordCache struct {
	mu      sync.Mutex
	entries map[string][]byte
	order   []string
}

const (
	recordCacheEntries = 8
	recordCacheMax     = 1 << 20 // records larger than this are not cached
)

func (rc *recordCache) get(oid string) ([]byte, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	b, ok := rc.entries[oid]
	return b, ok
}

func (rc *recordCache) put(oid string, data []byte) {
	if len(data) > recordCacheMax {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.entries == nil {
		rc.entries = make(map[string][]byte)
	}
	if _, ok := rc.entries[oid]; ok {
		return
	}
	if len(rc.order) >= recordCacheEntries {
		delete(rc.entries, rc.order[0])
		rc.order = rc.order[1:]
	}
	rc.entries[oid] = data
	rc.order = append(rc.order, oid)
}

// readBoundedBlob reads one "cat-file --batch" answer of at most limit bytes.
func readBoundedBlob(r io.Reader, oid string, limit int64) ([]byte, error) {
	var header []byte
	var one [1]byte
	for {
		if _, err := io.ReadFull(r, one[:]); err != nil {
			return nil, fmt.Errorf("reading object %s: %w", oid, err)
		}
		if one[0] == '\n' {
			break
		}
		if header = append(header, one[0]); len(header) > 200 {
			return nil, fmt.Errorf("reading object %s: malformed answer", oid)
		}
	}
	f := strings.Fields(string(header))
	if len(f) != 3 || f[0] != oid || f[1] != "blob" {
		return nil, fmt.Errorf("object %s is missing or not a blob: %q", oid, truncate(string(header), 120))
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 || size > limit {
		return nil, fmt.Errorf("object %s: size %q out of bounds (at most %d bytes)", oid, f[2], limit)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("reading object %s: %w", oid, err)
	}
	return data, nil
}
