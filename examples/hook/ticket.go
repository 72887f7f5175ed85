package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A ticket is the sandbox policy the hook decided for one command line, signed, that the exec
// subcommand enforces. Why signed, and not decided again in exec: the policy exec enforces is
// then exactly the one that was decided and recorded (a decision again could differ: a grant, an
// edited profile between the two), and exec needs no profile, gate or run state. The key is 32
// random bytes in the state directory (mode 0600), which the hook adds to the protected paths of
// every profile it runs: no tool the gate decides reads it, and the hardened sandbox masks it, so
// a command the agent writes cannot sign a wider policy. A ticket binds the line (its SHA-256),
// the directory it runs in, the project, the writable paths, the network switch, the protection
// list (by digest) and an expiry; a ticket copied onto another line, directory or policy does not
// verify.
type ticket struct {
	V        int      `json:"v"`
	Client   string   `json:"c"`
	Session  string   `json:"s"`
	Project  string   `json:"p"`
	Dir      string   `json:"d"`
	Line     string   `json:"l"` // hex SHA-256 of the line
	Writable []string `json:"w,omitempty"`
	Network  bool     `json:"n,omitempty"`
	Unknown  bool     `json:"u,omitempty"`
	Protect  string   `json:"x"` // hex SHA-256 of the masked-path list, kept in the state directory
	Expires  int64    `json:"e"` // Unix seconds
}

// ticketLife bounds how long after the decision a rewritten command may start (a client may
// still ask its user about it first).
const ticketLife = time.Hour

// maxTicket bounds a ticket's text.
const maxTicket = 64 << 10

func lineHash(line string) string {
	sum := sha256.Sum256([]byte(line))
	return hex.EncodeToString(sum[:])
}

// issue signs t, keeping the list of paths the sandbox masks (the gate's read-and-write protected
// paths) in the state directory under its digest.
func (h *hook) issue(t ticket, masked []string) (string, error) {
	key, err := execKey(h.stateDir, true)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(masked)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	t.Protect = hex.EncodeToString(sum[:])
	pf := filepath.Join(h.stateDir, "protect", t.Protect+".json")
	if _, err := os.Lstat(pf); err != nil {
		if err := os.MkdirAll(filepath.Dir(pf), 0o700); err != nil {
			return "", err
		}
		if err := writeFileAtomic(pf, b); err != nil {
			return "", err
		}
	}
	t.V, t.Expires = 1, time.Now().Add(ticketLife).Unix()
	body, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(sign(key, payload)), nil
}

func sign(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("reins-hook exec ticket v1\x00"))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// verifyTicket checks a ticket's signature and expiry and returns it with its masked paths.
func verifyTicket(stateDir, s string, now time.Time) (ticket, []string, error) {
	var t ticket
	if len(s) > maxTicket {
		return t, nil, errors.New("the ticket is too long")
	}
	payload, mac, ok := strings.Cut(s, ".")
	if !ok {
		return t, nil, errors.New("the ticket is malformed")
	}
	key, err := execKey(stateDir, false)
	if err != nil {
		return t, nil, err
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil || !hmac.Equal(got, sign(key, payload)) {
		return t, nil, errors.New("the ticket's signature does not verify")
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return t, nil, errors.New("the ticket is malformed")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil || t.V != 1 {
		return t, nil, errors.New("the ticket is malformed")
	}
	if now.Unix() > t.Expires {
		return t, nil, errors.New("the ticket expired")
	}
	if len(t.Protect) != 64 || strings.Trim(t.Protect, "0123456789abcdef") != "" {
		return t, nil, errors.New("the ticket is malformed")
	}
	b, err := readSmall(filepath.Join(stateDir, "protect", t.Protect+".json"), 1<<20)
	if err != nil {
		return t, nil, fmt.Errorf("the ticket's masked paths: %v", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != t.Protect {
		return t, nil, errors.New("the ticket's masked paths changed")
	}
	var masked []string
	if err := json.Unmarshal(b, &masked); err != nil {
		return t, nil, fmt.Errorf("the ticket's masked paths: %v", err)
	}
	return t, masked, nil
}

// execKey reads the signing key, creating it when create is set.
func execKey(stateDir string, create bool) ([]byte, error) {
	p := filepath.Join(stateDir, "exec.key")
	if b, err := readSmall(p, 64); err == nil {
		if len(b) != 32 {
			return nil, fmt.Errorf("%s is not a key", p)
		}
		return b, nil
	} else if !errors.Is(err, os.ErrNotExist) || !create {
		return nil, fmt.Errorf("the signing key: %v", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	// Written aside and linked into place, so no reader ever sees a partial key.
	tmp, err := os.CreateTemp(stateDir, ".exec.key.*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(key)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), p)
	}
	if errors.Is(err, os.ErrExist) {
		return execKey(stateDir, false) // another call made it
	}
	if err != nil {
		return nil, err
	}
	return key, nil
}
