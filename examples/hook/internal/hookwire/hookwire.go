// Package hookwire is what reins-hook (the front program a client starts for every tool call,
// examples/hook/front) and reins-hook-core (the hook itself, examples/hook) share: where the
// state directory is, how large a call may be, and the framing of a call handed to a resident
// core (see the core's daemon verb). It imports only the standard library's small packages, so
// that the front program starts about as fast as a hello-world program.
package hookwire

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/fnv"
	"io"
	"path/filepath"
	"slices"
	"strconv"
)

// MaxInput bounds a call's standard input; a larger payload is refused.
const MaxInput = 4 << 20

// maxOutput bounds what a resident core may answer (its standard output and error together).
const maxOutput = 16 << 20

// CoreName is the hook program, installed beside the front program.
const CoreName = "reins-hook-core"

// Clients are the first arguments that name a client's pre/post-tool call; the front program
// hands only these to a resident core.
var Clients = []string{"claude", "gemini", "codex"}

// StateDir returns the state directory: dir if given (made absolute), else
// $XDG_STATE_HOME/reins/hook, else the local application data directory (Windows), else
// ~/.local/state/reins/hook. getenv reads the environment and home finds the home directory
// (os.Getenv and os.UserHomeDir in the core).
func StateDir(dir string, getenv func(string) string, home func() (string, error)) (string, error) {
	if dir == "" {
		base := getenv("XDG_STATE_HOME")
		if !filepath.IsAbs(base) {
			base = getenv("LOCALAPPDATA")
		}
		if base == "" {
			h, err := home()
			if err != nil {
				return "", errors.New("no state directory (pass -state DIR): " + err.Error())
			}
			base = filepath.Join(h, ".local", "state")
		}
		dir = filepath.Join(base, "reins", "hook")
	}
	return filepath.Abs(dir)
}

// Getenv returns the value of key in env (KEY=value entries, as os.Environ returns them; the
// last one wins, as for a process), without building the map os.Getenv builds on first use.
func Getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if len(env[i]) > len(key) && env[i][len(key)] == '=' && env[i][:len(key)] == key {
			return env[i][len(key)+1:]
		}
	}
	return ""
}

// DaemonDir is the directory of the resident cores' sockets, inside the state directory (which
// no tool the gate decides may read or write, and which the hardened sandbox masks).
func DaemonDir(stateDir string) string { return filepath.Join(stateDir, "daemon") }

// SocketPath returns the socket of the resident core that answers calls made with exactly these
// arguments, environment, working directory and user, by exactly this core binary (its path and
// identity, in coreID with the caller's namespaces): a resident core is then indistinguishable
// from a core started for the call. Reach
// it through SocketAddr. The name is a 128-bit FNV-1a hash of all of these: the situations it
// tells apart are all the client's own (nothing a tool call supplies is in them), so it needs to
// be unique, not unforgeable.
func SocketPath(stateDir, core string, coreID []byte, args, env []string, cwd string, uid int) string {
	h := fnv.New128a()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field("reins-hook daemon v1")
	field(core)
	field(string(coreID))
	field(cwd)
	field(strconv.Itoa(uid))
	field(strconv.Itoa(len(args)))
	for _, a := range args {
		field(a)
	}
	env = slices.Clone(env)
	slices.Sort(env)
	field(strconv.Itoa(len(env)))
	for _, e := range env {
		field(e)
	}
	return filepath.Join(DaemonDir(stateDir), hex.EncodeToString(h.Sum(nil))+".sock")
}

// magic starts every frame.
const magic = "RHD1"

// WriteCall frames a call's standard input.
func WriteCall(w io.Writer, stdin []byte) error {
	b := make([]byte, 0, len(magic)+4+len(stdin))
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(stdin)))
	b = append(b, stdin...)
	_, err := w.Write(b)
	return err
}

// ReadCall reads a framed call's standard input (at most MaxInput+1 bytes: the core refuses
// what is larger than MaxInput, as it does when started for the call).
func ReadCall(r io.Reader) ([]byte, error) {
	var hdr [len(magic) + 4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if string(hdr[:len(magic)]) != magic {
		return nil, errors.New("not a reins-hook call")
	}
	n := binary.BigEndian.Uint32(hdr[len(magic):])
	if n > MaxInput+1 {
		return nil, errors.New("the call is larger than " + strconv.Itoa(MaxInput+1) + " bytes")
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// Answer is what the core answered: its exit status, standard output and standard error.
type Answer struct {
	Code           int
	Stdout, Stderr []byte
}

// WriteAnswer frames an answer.
func WriteAnswer(w io.Writer, a Answer) error {
	b := make([]byte, 0, len(magic)+1+8+len(a.Stdout)+len(a.Stderr))
	b = append(b, magic...)
	b = append(b, byte(a.Code))
	b = binary.BigEndian.AppendUint32(b, uint32(len(a.Stdout)))
	b = append(b, a.Stdout...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(a.Stderr)))
	b = append(b, a.Stderr...)
	_, err := w.Write(b)
	return err
}

// ReadAnswer reads a framed answer; an answer cut short is an error.
func ReadAnswer(r io.Reader) (Answer, error) {
	var a Answer
	var hdr [len(magic) + 1]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return a, err
	}
	if string(hdr[:len(magic)]) != magic {
		return a, errors.New("not a reins-hook answer")
	}
	a.Code = int(hdr[len(magic)])
	total := 0
	for _, p := range []*[]byte{&a.Stdout, &a.Stderr} {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return a, err
		}
		size := int(binary.BigEndian.Uint32(n[:]))
		if total += size; total > maxOutput {
			return a, errors.New("the answer is larger than " + strconv.Itoa(maxOutput) + " bytes")
		}
		*p = make([]byte, size)
		if _, err := io.ReadFull(r, *p); err != nil {
			return a, err
		}
	}
	return a, nil
}
