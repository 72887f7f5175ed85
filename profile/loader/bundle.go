package loader

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// BundleFormat is the format string of a signed policy bundle's envelope ("format" key).
const BundleFormat = "reins-policy-bundle/v1"

// MaxClockSkew is how far in the future a bundle's issued_at may lie before the bundle is
// refused (the issuer's clock and this machine's may differ a little).
const MaxClockSkew = 5 * time.Minute

// ErrBundleRefused is matched (errors.Is) by the error of a policy bundle that was refused: it
// does not verify against the pinned keys, is older than the one in use, has expired, is
// malformed, or its profiles are not valid.
var ErrBundleRefused = errors.New("profile: policy bundle refused")

// BundleError is why a policy bundle was refused. It matches [ErrBundleRefused].
type BundleError struct {
	// File is the bundle's path ("" when it was not read from a file).
	File string
	// Version is the bundle's version when its signature verified; 0 otherwise (an unverified
	// version is not reported as a fact).
	Version uint64
	// Reason says what is wrong, for humans.
	Reason string
	// Err is the underlying error, if any (a *Error of a profile in the bundle, a store's error).
	Err error
}

// Error returns "profile: policy bundle FILE (version N) refused: REASON".
func (e *BundleError) Error() string {
	s := "profile: policy bundle"
	if e.File != "" {
		s += " " + e.File
	}
	if e.Version > 0 {
		s += " (version " + strconv.FormatUint(e.Version, 10) + ")"
	}
	return s + " refused: " + e.Reason
}

// Is reports whether target is ErrBundleRefused.
func (e *BundleError) Is(target error) bool { return target == ErrBundleRefused }

// Unwrap returns Err.
func (e *BundleError) Unwrap() error { return e.Err }

// Bundle is a signed policy bundle's content: the managed profile (and optionally the
// organisation's defaults), with its version counter and validity. [VerifyBundle] returns one
// only when its signature verifies against a pinned key and it is valid now; [SignBundle] makes
// the envelope for one.
type Bundle struct {
	// Version is the bundle's counter, at least 1: a host refuses a bundle older than the one it
	// uses (see [VersionStore]).
	Version uint64
	// Issued and Expires bound when the bundle may be used (whole seconds): it is refused from
	// Expires on, and while Issued lies more than MaxClockSkew in the future.
	Issued, Expires time.Time
	// Managed is the managed profile: a profile file's JSON content, which may set the
	// managed tier's caps ("managed": {...}). Required.
	Managed []byte
	// Defaults is the organisation's defaults, a profile file's JSON content applied on top of
	// the built-in profile and below the user file (the built-in overrides); nil for none.
	Defaults []byte
}

// envelope is a bundle file: JSON, every key required but defaults.
type envelope struct {
	Format    string `json:"format"`
	Version   uint64 `json:"version"`
	IssuedAt  string `json:"issued_at"`
	ExpiresAt string `json:"expires_at"`
	Managed   string `json:"managed"`
	Defaults  string `json:"defaults,omitempty"`
	Signature string `json:"signature"`
}

// message is the canonical encoding the signature covers: the format string and a newline,
// then the version (8 bytes), the issue and expiry times (Unix seconds, 8 bytes each), and the
// managed and the defaults profile, each as its length (4 bytes) followed by its bytes; every
// integer big-endian. Nothing in the envelope is unsigned but the signature itself.
func (b *Bundle) message() []byte {
	out := make([]byte, 0, len(BundleFormat)+1+24+8+len(b.Managed)+len(b.Defaults))
	out = append(out, BundleFormat...)
	out = append(out, '\n')
	out = binary.BigEndian.AppendUint64(out, b.Version)
	out = binary.BigEndian.AppendUint64(out, uint64(b.Issued.Unix()))
	out = binary.BigEndian.AppendUint64(out, uint64(b.Expires.Unix()))
	for _, p := range [][]byte{b.Managed, b.Defaults} {
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}

// Digest returns the hex SHA-256 of the bundle's signed content ([VersionStore] records it
// with the version, so two different bundles with the same version are told apart).
func (b *Bundle) Digest() string {
	sum := sha256.Sum256(b.message())
	return hex.EncodeToString(sum[:])
}

// check says why b cannot be signed or used, leaving time aside, or "".
func (b *Bundle) check() string {
	switch {
	case b.Version == 0:
		return "version 0: the version counter starts at 1"
	case len(b.Managed) == 0:
		return "no managed profile"
	case b.Issued.Nanosecond() != 0 || b.Expires.Nanosecond() != 0:
		return "issued_at and expires_at are whole seconds"
	case !b.Expires.After(b.Issued):
		return fmt.Sprintf("expires_at %s is not after issued_at %s", b.Expires.UTC().Format(time.RFC3339), b.Issued.UTC().Format(time.RFC3339))
	case len(b.Managed) > maxFileSize || len(b.Defaults) > maxFileSize:
		return fmt.Sprintf("a profile in the bundle is larger than %d bytes", maxFileSize)
	}
	return ""
}

// SignBundle returns the envelope of b signed with key: the bundle file a host verifies with
// [VerifyBundle] against key's public half. It fails for a bundle no host would accept (version
// 0, no managed profile, times out of order or not whole seconds, a profile over 1 MiB).
func SignBundle(b Bundle, key ed25519.PrivateKey) ([]byte, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("profile: SignBundle: the key is %d bytes, not an Ed25519 private key", len(key))
	}
	if why := b.check(); why != "" {
		return nil, fmt.Errorf("profile: SignBundle: %s", why)
	}
	env := envelope{Format: BundleFormat, Version: b.Version,
		IssuedAt: b.Issued.UTC().Format(time.RFC3339), ExpiresAt: b.Expires.UTC().Format(time.RFC3339),
		Managed:   base64.StdEncoding.EncodeToString(b.Managed),
		Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(key, b.message()))}
	if b.Defaults != nil {
		env.Defaults = base64.StdEncoding.EncodeToString(b.Defaults)
	}
	out, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// VerifyBundle decodes a bundle file and returns its content when its Ed25519 signature
// verifies against one of keys and it is valid at now. Every failure is a *BundleError
// (matching ErrBundleRefused) that says why: the envelope is not valid JSON in the format
// (unknown or repeated keys, a missing key, bad base64, a time that is not RFC 3339 in whole
// seconds), the signature does not verify against any key (a tampered bundle or one signed with
// another key), or the bundle has expired, is not yet issued, or is otherwise invalid. The
// envelope is at most 1 MiB. VerifyBundle does not know which version is in use: see
// [VersionStore] for replays.
func VerifyBundle(data []byte, keys []ed25519.PublicKey, now time.Time) (*Bundle, error) {
	refuse := func(v uint64, format string, args ...any) (*Bundle, error) {
		return nil, &BundleError{Version: v, Reason: fmt.Sprintf(format, args...)}
	}
	if len(data) > maxFileSize {
		return refuse(0, "the bundle is larger than %d bytes", maxFileSize)
	}
	if len(keys) == 0 {
		return refuse(0, "no public key is pinned to verify it with")
	}
	env, why := decodeEnvelope(data)
	if why != "" {
		return refuse(0, "%s", why)
	}
	b := &Bundle{Version: env.Version}
	for _, t := range []struct {
		key, val string
		dst      *time.Time
	}{{"issued_at", env.IssuedAt, &b.Issued}, {"expires_at", env.ExpiresAt, &b.Expires}} {
		v, err := time.Parse(time.RFC3339, t.val)
		if err != nil || v.Nanosecond() != 0 {
			return refuse(0, "%s %q is not an RFC 3339 time in whole seconds", t.key, t.val)
		}
		*t.dst = v
	}
	var err error
	if b.Managed, err = decodeBase64(env.Managed); err != nil {
		return refuse(0, "managed: %v", err)
	}
	if env.Defaults != "" {
		if b.Defaults, err = decodeBase64(env.Defaults); err != nil {
			return refuse(0, "defaults: %v", err)
		}
	}
	sig, err := decodeBase64(env.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return refuse(0, "the signature is not %d bytes of base64", ed25519.SignatureSize)
	}
	msg := b.message()
	verified := false
	for _, k := range keys {
		if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, msg, sig) {
			verified = true
			break
		}
	}
	if !verified {
		return refuse(0, "the signature does not verify against the pinned key: the bundle was changed after it was signed, or signed with another key")
	}
	// The signature holds: what follows is about a bundle the organisation did sign.
	if why := b.check(); why != "" {
		return refuse(b.Version, "%s", why)
	}
	if !now.Before(b.Expires) {
		return refuse(b.Version, "it expired at %s", b.Expires.UTC().Format(time.RFC3339))
	}
	if b.Issued.After(now.Add(MaxClockSkew)) {
		return refuse(b.Version, "it is issued at %s, in the future (check the clock)", b.Issued.UTC().Format(time.RFC3339))
	}
	return b, nil
}

// decodeEnvelope decodes the envelope strictly: one JSON object, no unknown or repeated key,
// every key present but defaults, the format known.
func decodeEnvelope(data []byte) (envelope, string) {
	var env envelope
	if why := uniqueKeys(data); why != "" {
		return env, why
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return env, "not a bundle envelope: " + err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return env, "not a bundle envelope: data after the JSON object"
	}
	switch {
	case env.Format != BundleFormat:
		return env, fmt.Sprintf("format %q is not %q", env.Format, BundleFormat)
	case env.IssuedAt == "" || env.ExpiresAt == "" || env.Managed == "" || env.Signature == "":
		return env, "issued_at, expires_at, managed and signature are required"
	}
	return env, ""
}

// uniqueKeys says why data is not a JSON object whose keys appear once each, or "" (the other
// checks are Decode's).
func uniqueKeys(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "not a bundle envelope: not a JSON object"
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "not a bundle envelope: " + err.Error()
		}
		k, _ := t.(string)
		if seen[k] {
			return fmt.Sprintf("the key %q appears twice", k)
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "not a bundle envelope: " + err.Error()
		}
	}
	return ""
}

// decodeBase64 decodes standard base64 with padding, strictly (no newlines, no stray bits).
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, errors.New("not standard base64")
	}
	return b, nil
}

// BundleSeen is the newest bundle a host has used: its version and [Bundle.Digest].
type BundleSeen struct {
	Version uint64 `json:"version"`
	Digest  string `json:"sha256"`
}

// VersionStore keeps the newest bundle a host has used, so that an older bundle put back in
// its place (a replay) is refused, across restarts when the store persists. Implementations
// must be safe for concurrent use.
type VersionStore interface {
	// Seen returns the newest bundle recorded; the zero BundleSeen when none is.
	Seen(ctx context.Context) (BundleSeen, error)
	// Record records s as the newest bundle used. It fails when a newer version is recorded
	// already (another process used a newer bundle meanwhile).
	Record(ctx context.Context, s BundleSeen) error
}

// MemoryVersionStore is a VersionStore that lives as long as the value: it catches a replay
// within one process only. The zero value is ready to use.
type MemoryVersionStore struct {
	mu   sync.Mutex
	seen BundleSeen
}

var _ VersionStore = (*MemoryVersionStore)(nil)

// Seen implements VersionStore.
func (m *MemoryVersionStore) Seen(context.Context) (BundleSeen, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen, nil
}

// Record implements VersionStore.
func (m *MemoryVersionStore) Record(_ context.Context, s BundleSeen) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen.Version > s.Version {
		return fmt.Errorf("profile: bundle version %d is recorded already, newer than %d", m.seen.Version, s.Version)
	}
	m.seen = s
	return nil
}

// FileVersionStore is a VersionStore in a small JSON file ({"version": N, "sha256": "..."}),
// written atomically (a temporary file in the same directory, synced, renamed over it). Keep it
// where the agent cannot write (the loader protects the user configuration directory, its
// default place) and, to hold against the local user too, where only the administrator can.
type FileVersionStore struct {
	path string
	mu   sync.Mutex
}

var _ VersionStore = (*FileVersionStore)(nil)

// NewFileVersionStore returns a FileVersionStore at path; nothing is read or written yet. A
// missing file records no bundle.
func NewFileVersionStore(path string) *FileVersionStore { return &FileVersionStore{path: path} }

// Path returns the file's path.
func (s *FileVersionStore) Path() string { return s.path }

// Seen implements VersionStore. The file is read the way profile files are (a regular file of
// at most 1 MiB); a file that is not {"version": N, "sha256": "..."} is an error, not "none".
func (s *FileVersionStore) Seen(ctx context.Context) (BundleSeen, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read(ctx)
}

func (s *FileVersionStore) read(ctx context.Context) (BundleSeen, error) {
	data, err := readProfileFile(ctx, s.path)
	switch {
	case err != nil && !isLoadError(err) && errors.Is(err, fs.ErrNotExist):
		return BundleSeen{}, nil
	case err != nil:
		return BundleSeen{}, err
	}
	var seen BundleSeen
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&seen); err != nil {
		return BundleSeen{}, &Error{File: s.path, Reason: "not a bundle version record: " + err.Error()}
	}
	return seen, nil
}

// Record implements VersionStore.
func (s *FileVersionStore) Record(ctx context.Context, seen BundleSeen) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.read(ctx)
	if err != nil {
		return err
	}
	if cur.Version > seen.Version {
		return fmt.Errorf("profile: %s records bundle version %d, newer than %d", s.path, cur.Version, seen.Version)
	}
	if cur == seen {
		return nil
	}
	data, err := json.Marshal(seen)
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(s.path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path)
	}
	if err != nil {
		return fmt.Errorf("profile: recording the bundle version in %s: %w", s.path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename is durable once the directory is synced (best effort where it cannot be)
		d.Close()
	}
	return nil
}
