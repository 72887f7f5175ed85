package reins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// maxStateFile bounds the state file a FileStore reads; a larger one is refused, not read.
const maxStateFile = 4 << 20

// FileStore is a Store in one JSON file, for the processes of one machine that share a run (an
// agent CLI's hook, started once per tool call) or that keep "always" grants beside the user
// profile file. Every Update holds an exclusive lock on a lock file beside it (path + ".lock",
// flock(2)), reads the file afresh, applies the change and replaces the file atomically (a
// temporary file, fsynced, renamed over it), so processes take turns and none loses another's
// update. Load reads the file only when its identity (inode, size, modification time) changed
// since the last read.
//
// The file is created with mode 0600 in a directory made with mode 0700. A file that does not
// decode, is larger than 4 MiB, or holds a grant broader than an approval (Grant.Validate) is
// refused with an error naming the file and the line: a state file edited to widen a grant is
// never trusted. Put it where the agent cannot write (the gate protects the user configuration
// directory). FileStore needs flock, so it works on Unix only; elsewhere its methods return an
// error.
type FileStore struct {
	path string
	mu   sync.Mutex // serializes this process's updates and guards the cache
	id   fileID
	cur  *RunState
}

var _ Store = (*FileStore)(nil)

// NewFileStore returns a FileStore at path. Nothing is read or created until the first call.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// Path returns the file's path.
func (f *FileStore) Path() string { return f.path }

type fileID struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
}

// Load implements Store.
func (f *FileStore) Load(ctx context.Context) (*RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id, err := statID(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return emptyState, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reins: state file %s: %w", f.path, err)
	}
	if f.cur != nil && id == f.id {
		return f.cur, nil
	}
	s, id, err := f.read()
	if err != nil {
		return nil, err
	}
	f.cur, f.id = s, id
	return s, nil
}

// Update implements Store.
func (f *FileStore) Update(ctx context.Context, fn func(*RunState) error) (*RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("reins: state directory %s: %w", dir, err)
	}
	lf, err := os.OpenFile(f.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("reins: state lock %s.lock: %w", f.path, err)
	}
	defer lf.Close()
	if err := lockFile(ctx, lf); err != nil {
		return nil, fmt.Errorf("reins: state lock %s.lock: %w", f.path, err)
	}
	defer unlockFile(lf)
	cur, _, err := f.read()
	if err != nil {
		return nil, err
	}
	next := cur.Clone()
	if err := fn(next); err != nil {
		return nil, err
	}
	if err := next.Validate(); err != nil {
		return nil, err
	}
	next.Rev++
	if err := f.write(next); err != nil {
		return nil, err
	}
	if id, err := statID(f.path); err == nil {
		f.cur, f.id = next, id
	}
	return next, nil
}

// read reads and checks the file; a missing file is the empty state.
func (f *FileStore) read() (*RunState, fileID, error) {
	fh, err := openNoFollow(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return &RunState{}, fileID{}, nil
	}
	if err != nil {
		return nil, fileID{}, fmt.Errorf("reins: state file %s: %w", f.path, err)
	}
	defer fh.Close()
	id, err := fstatID(fh)
	if err != nil {
		return nil, fileID{}, fmt.Errorf("reins: state file %s: %w", f.path, err)
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxStateFile+1))
	if err != nil {
		return nil, fileID{}, fmt.Errorf("reins: state file %s: %w", f.path, err)
	}
	if len(b) > maxStateFile {
		return nil, fileID{}, fmt.Errorf("reins: state file %s is larger than %d bytes", f.path, maxStateFile)
	}
	s := &RunState{}
	if len(bytes.TrimSpace(b)) == 0 {
		return s, id, nil
	}
	var raw struct {
		RunState
		Grants []json.RawMessage `json:"grants"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fileID{}, fmt.Errorf("reins: state file %s:%d: %w", f.path, lineOf(b, dec.InputOffset()), err)
	}
	*s = raw.RunState
	s.Grants = nil
	for _, g := range raw.Grants {
		var gr Grant
		d := json.NewDecoder(bytes.NewReader(g))
		d.DisallowUnknownFields()
		line := lineOf(b, int64(bytes.Index(b, g)))
		if err := d.Decode(&gr); err != nil {
			return nil, fileID{}, fmt.Errorf("reins: state file %s:%d: %w", f.path, line, err)
		}
		if err := gr.Validate(); err != nil {
			return nil, fileID{}, fmt.Errorf("reins: state file %s:%d: %w", f.path, line, err)
		}
		s.Grants = append(s.Grants, gr)
	}
	if err := s.Validate(); err != nil {
		return nil, fileID{}, fmt.Errorf("reins: state file %s: %w", f.path, err)
	}
	return s, id, nil
}

// lineOf returns the 1-based line of byte offset off in b.
func lineOf(b []byte, off int64) int {
	if off < 0 || off > int64(len(b)) {
		off = int64(len(b))
	}
	return bytes.Count(b[:off], []byte{'\n'}) + 1
}

// write replaces the file with s, atomically.
func (f *FileStore) write(s *RunState) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("reins: state file %s: %w", f.path, err)
	}
	dir := filepath.Dir(f.path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".*")
	if err != nil {
		return fmt.Errorf("reins: state file %s: %w", f.path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.path)
	}
	if err != nil {
		return fmt.Errorf("reins: state file %s: %w", f.path, err)
	}
	syncDir(dir)
	return nil
}
