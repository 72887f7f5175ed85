package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
)

// maxState bounds the state file; a larger one is refused, not read.
const maxState = 4 << 20

// state is the run state of one Claude Code session, kept between the hook's invocations.
type state struct {
	Version   int                      `json:"version"`
	Halted    string                   `json:"halted,omitempty"` // the halt's reason, when latched
	HaltCause string                   `json:"halt_cause,omitempty"`
	Actions   int                      `json:"actions,omitempty"`  // tool calls let through
	Failures  map[string]int           `json:"failures,omitempty"` // consecutive failures per tool
	Grants    []session.Grant          `json:"grants,omitempty"`   // session grants
	Pending   map[string][]policy.Rule `json:"pending,omitempty"`  // tool_use_id -> the grant an approval would make
}

// stateFile is the locked state file of one session.
type stateFile struct {
	path string
	lock *os.File
	v    state
}

// openState locks and reads the session's state file, creating it when missing. The lock is
// held until close, so concurrent hook processes of one session take turns.
func openState(dir, sessionID string) (*stateFile, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %v", err)
	}
	path := filepath.Join(dir, sessionID+".json")
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state lock: %v", err)
	}
	if err := lockFile(lf); err != nil {
		lf.Close()
		return nil, fmt.Errorf("state lock %s: %v", lf.Name(), err)
	}
	sf := &stateFile{path: path, lock: lf, v: state{Version: 1}}
	if err := sf.read(); err != nil {
		sf.close()
		return nil, err
	}
	if sf.v.Pending == nil {
		sf.v.Pending = map[string][]policy.Rule{}
	}
	if sf.v.Failures == nil {
		sf.v.Failures = map[string]int{}
	}
	return sf, nil
}

func (sf *stateFile) read() error {
	f, err := os.Open(sf.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state file: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("state file: %v", err)
	}
	if !st.Mode().IsRegular() || st.Size() > maxState {
		return fmt.Errorf("state file %s is not a regular file of at most %d bytes", sf.path, maxState)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxState+1))
	if err != nil {
		return fmt.Errorf("state file: %v", err)
	}
	if err := json.Unmarshal(b, &sf.v); err != nil {
		return fmt.Errorf("state file %s is damaged (%v): remove it to start the session's state afresh", sf.path, err)
	}
	if sf.v.Version != 1 {
		return fmt.Errorf("state file %s has version %d, this hook knows 1", sf.path, sf.v.Version)
	}
	return nil
}

// save writes the state atomically.
func (sf *stateFile) save() error {
	b, err := json.Marshal(&sf.v)
	if err != nil {
		return err
	}
	tmp := sf.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("state file: %v", err)
	}
	if err := os.Rename(tmp, sf.path); err != nil {
		return fmt.Errorf("state file: %v", err)
	}
	return nil
}

func (sf *stateFile) close() {
	_ = unlockFile(sf.lock)
	_ = sf.lock.Close()
}
