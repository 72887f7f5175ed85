package loader_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
)

// testKey returns a fixed Ed25519 key pair made from seed.
func testKey(seed byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	return priv.Public().(ed25519.PublicKey), priv
}

var bundleNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const managedV1 = `{"managed": {"max_band": "trusted"}, "custom_rules": [{"id": "org-deny-push", "priority": 0, "condition": {"commands": ["git push"]}, "action": "DENY"}]}`

// bundle signs a bundle of version v valid around bundleNow.
func bundle(t testing.TB, priv ed25519.PrivateKey, v uint64, managed string) []byte {
	t.Helper()
	data, err := loader.SignBundle(loader.Bundle{Version: v, Issued: bundleNow.Add(-time.Hour), Expires: bundleNow.Add(24 * time.Hour),
		Managed: []byte(managed)}, priv)
	require.NoError(t, err)
	return data
}

// bundleSetup is a host's configuration: a user file, a bundle file, a pinned key, a version
// store beside the user file, and a clock.
type bundleSetup struct {
	t       *testing.T
	dir     string
	file    string
	pub     ed25519.PublicKey
	priv    ed25519.PrivateKey
	now     time.Time
	refusal loader.Refusal
}

func newBundleSetup(t *testing.T) *bundleSetup {
	pub, priv := testKey(1)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "config"), 0o755))
	return &bundleSetup{t: t, dir: dir, file: filepath.Join(dir, "etc", "policy-bundle.json"), pub: pub, priv: priv, now: bundleNow}
}

func (s *bundleSetup) write(data []byte) {
	s.t.Helper()
	require.NoError(s.t, os.MkdirAll(filepath.Dir(s.file), 0o755))
	require.NoError(s.t, os.WriteFile(s.file, data, 0o644))
}

func (s *bundleSetup) opts() *loader.Options {
	return &loader.Options{UserDir: filepath.Join(s.dir, "config"), Default: profile.ProfileDev,
		Bundle: &loader.BundleOptions{File: s.file, Keys: []ed25519.PublicKey{s.pub}, OnRefusal: s.refusal,
			Now: func() time.Time { return s.now }}}
}

func (s *bundleSetup) loader() *loader.Loader {
	s.t.Helper()
	l, err := loader.New(s.opts())
	require.NoError(s.t, err)
	return l
}

// TestBundleIsVerifiedAndApplied: a bundle signed with the pinned key sets the managed tier
// (its version in the profile's tier, the provenance and the Loaded), and carries the
// organisation's defaults below the user file.
func TestBundleIsVerifiedAndApplied(t *testing.T) {
	t.Parallel()
	s := newBundleSetup(t)
	data, err := loader.SignBundle(loader.Bundle{Version: 7, Issued: bundleNow.Add(-time.Hour), Expires: bundleNow.Add(time.Hour),
		Managed: []byte(managedV1), Defaults: []byte(`{"active_profile": "PROFILE-SAFE", "shell_blocklist": ["npm publish"]}`)}, s.priv)
	require.NoError(t, err)
	s.write(data)
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "config", "profile.json"), []byte(`{"autonomy": 0.2}`), 0o644))
	l, err := s.loader().Load(context.Background())
	require.NoError(t, err)
	p := l.Profile
	require.NotNil(t, p.Managed)
	assert.Equal(t, uint64(7), p.Managed.Bundle)
	assert.Equal(t, "bundle v7 "+s.file, p.Managed.Source)
	require.NotNil(t, l.Bundle)
	assert.Equal(t, uint64(7), l.Bundle.Version)
	assert.Equal(t, profile.ProfileSafe, p.Name, "the defaults select the base")
	assert.Equal(t, 0.2, p.Autonomy, "the user file applies over the defaults")
	assert.Contains(t, p.ShellBlocklist, "npm publish")
	src, ok := l.Provenance.Of("rules", "org-deny-push")
	require.True(t, ok)
	assert.Equal(t, loader.OriginManaged, src.Origin)
	assert.Equal(t, uint64(7), src.Bundle)
	assert.Equal(t, s.file+"#managed", src.File)
	src, _ = l.Provenance.Of("active_profile", "")
	assert.Equal(t, loader.OriginDefaults, src.Origin)
	assert.Contains(t, l.Describe(), "bundle        version 7, issued 2026-03-01T11:00:00Z, expires 2026-03-01T13:00:00Z")
	seen, err := loader.NewFileVersionStore(filepath.Join(s.dir, "config", "policy-bundle.seen.json")).Seen(context.Background())
	require.NoError(t, err)
	assert.Equal(t, uint64(7), seen.Version, "the version is kept beside the user file by default")
}

// tamper changes one byte of the managed profile inside a signed bundle, keeping the
// signature.
func tamper(t *testing.T, data []byte) []byte {
	var env map[string]any
	require.NoError(t, json.Unmarshal(data, &env))
	m, err := base64.StdEncoding.DecodeString(env["managed"].(string))
	require.NoError(t, err)
	m = bytes.Replace(m, []byte(`"DENY"`), []byte(`"ALLOW"`), 1)
	env["managed"] = base64.StdEncoding.EncodeToString(m)
	out, err := json.Marshal(env)
	require.NoError(t, err)
	return out
}

// TestBundleRefusals: a tampered payload, another key, an older version (a replay, also after a
// restart through the version store), another bundle with the same version, an expired one, one
// issued in the future, a missing one and a malformed one are each refused with a clear error
// matching ErrBundleRefused; under KeepLast nothing is returned (the host keeps what it has),
// under DenyAll the profile denies everything.
func TestBundleRefusals(t *testing.T) {
	t.Parallel()
	_, otherKey := testKey(2)
	for _, tc := range []struct {
		name string
		// prepare writes the bundle to refuse; the setup has used version 5 already.
		prepare func(s *bundleSetup)
		want    string
	}{
		{"tampered payload", func(s *bundleSetup) { s.write(tamper(t, bundle(t, s.priv, 6, managedV1))) }, "the signature does not verify"},
		{"wrong key", func(s *bundleSetup) { s.write(bundle(t, otherKey, 6, managedV1)) }, "the signature does not verify"},
		{"replayed older version", func(s *bundleSetup) { s.write(bundle(t, s.priv, 4, managedV1)) }, "older than the bundle in use (version 5): a replay"},
		{"same version, other content", func(s *bundleSetup) {
			s.write(bundle(t, s.priv, 5, strings.Replace(managedV1, "git push", "git pull", 1)))
		}, "another bundle with the same version 5"},
		{"expired", func(s *bundleSetup) { s.write(bundle(t, s.priv, 6, managedV1)); s.now = bundleNow.Add(25 * time.Hour) }, "it expired at 2026-03-02T12:00:00Z"},
		{"issued in the future", func(s *bundleSetup) {
			data, err := loader.SignBundle(loader.Bundle{Version: 6, Issued: bundleNow.Add(time.Hour), Expires: bundleNow.Add(2 * time.Hour), Managed: []byte(managedV1)}, s.priv)
			require.NoError(t, err)
			s.write(data)
		}, "in the future"},
		{"missing", func(s *bundleSetup) { require.NoError(t, os.Remove(s.file)) }, "there is no bundle at this path"},
		{"not an envelope", func(s *bundleSetup) { s.write([]byte(`{"format": "reins-policy-bundle/v1", "extra": 1}`)) }, "not a bundle envelope"},
		{"invalid profile", func(s *bundleSetup) { s.write(bundle(t, s.priv, 6, `{"autonomy": 7}`)) }, "its managed profile is not valid"},
	} {
		for _, refusal := range []loader.Refusal{loader.KeepLast, loader.DenyAll} {
			t.Run(tc.name+"/"+refusal.String(), func(t *testing.T) {
				t.Parallel()
				s := newBundleSetup(t)
				s.refusal = refusal
				s.write(bundle(t, s.priv, 5, managedV1))
				good, err := s.loader().Load(context.Background())
				require.NoError(t, err)
				require.Equal(t, uint64(5), good.Profile.Managed.Bundle)

				tc.prepare(s)
				l := s.loader() // a new Loader: a restart; the version store remembers version 5
				got, err := l.Load(context.Background())
				if refusal == loader.KeepLast {
					require.ErrorIs(t, err, loader.ErrBundleRefused)
					assert.Contains(t, err.Error(), tc.want)
					assert.Contains(t, err.Error(), s.file)
					assert.Nil(t, got, "nothing is applied")
					var be *loader.BundleError
					require.True(t, errors.As(err, &be))
					return
				}
				require.NoError(t, err)
				require.ErrorIs(t, got.BundleRefused, loader.ErrBundleRefused)
				assert.Contains(t, got.BundleRefused.Error(), tc.want)
				p := got.Profile
				assert.Equal(t, profile.ModeEmergencyStop, p.Mode, "denies everything")
				require.NotNil(t, p.Managed)
				assert.Equal(t, profile.ModeEmergencyStop, p.Managed.MaxMode, "and nothing can switch out of it")
				assert.True(t, p.Managed.RulesOnly)
				assert.Zero(t, p.Managed.Bundle, "no verified version")
				_, err = p.Compile()
				require.NoError(t, err)
				r, err := got.Rebase(profile.ProfileFullAuto)
				require.NoError(t, err)
				assert.Equal(t, profile.ModeEmergencyStop, r.Profile.Mode)
				assert.Contains(t, got.Describe(), "every action is denied")
			})
		}
	}
}

// TestBundleVersionsMoveForward: a newer bundle replaces the one in use; the Loader refuses the
// older one afterwards even with an in-memory store; an unchanged bundle reloads.
func TestBundleVersionsMoveForward(t *testing.T) {
	t.Parallel()
	s := newBundleSetup(t)
	o := s.opts()
	o.Bundle.Versions = &loader.MemoryVersionStore{}
	l, err := loader.New(o)
	require.NoError(t, err)
	s.write(bundle(t, s.priv, 1, managedV1))
	_, err = l.Load(context.Background())
	require.NoError(t, err)
	_, err = l.Load(context.Background())
	require.NoError(t, err, "the same bundle again")
	s.write(bundle(t, s.priv, 2, `{"managed": {"max_band": "supervised"}}`))
	got, err := l.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, policy.BandSupervised, *got.Profile.Managed.MaxBand)
	s.write(bundle(t, s.priv, 1, managedV1))
	_, err = l.Load(context.Background())
	require.ErrorContains(t, err, "older than the bundle in use (version 2)")
}

// TestBundleWatchReloadsOnExpiry: Watch reloads when the bundle in use expires, and the load
// refuses it.
func TestBundleWatchReloadsOnExpiry(t *testing.T) {
	t.Parallel()
	s := newBundleSetup(t)
	s.write(bundle(t, s.priv, 3, managedV1))
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	now := bundleNow
	o := s.opts()
	o.Bundle.Now = func() time.Time { <-mu; defer func() { mu <- struct{}{} }(); return now }
	l, err := loader.New(o)
	require.NoError(t, err)
	_, err = l.Load(context.Background())
	require.NoError(t, err)
	<-mu
	now = bundleNow.Add(48 * time.Hour)
	mu <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan error, 1)
	go func() {
		_ = l.Watch(ctx, time.Millisecond, func(_ *loader.Loaded, err error) {
			select {
			case got <- err:
			default:
			}
			cancel()
		})
	}()
	err = <-got
	require.ErrorIs(t, err, loader.ErrBundleRefused)
	assert.Contains(t, err.Error(), "expired")
}

// TestBundleOptionsAreChecked: keys must be pinned and be Ed25519 public keys; without a user
// directory a version store must be given.
func TestBundleOptionsAreChecked(t *testing.T) {
	t.Parallel()
	pub, _ := testKey(1)
	for _, tc := range []struct {
		opts *loader.BundleOptions
		user bool
		want string
	}{
		{&loader.BundleOptions{File: "/b"}, true, "no public key is pinned"},
		{&loader.BundleOptions{File: "/b", Keys: []ed25519.PublicKey{pub[:5]}}, true, "not an Ed25519 public key"},
		{&loader.BundleOptions{File: "/b", Keys: []ed25519.PublicKey{pub}, OnRefusal: 9}, true, "OnRefusal"},
		{&loader.BundleOptions{File: "/b", Keys: []ed25519.PublicKey{pub}}, false, "give a VersionStore"},
	} {
		o := &loader.Options{Bundle: tc.opts, UserDir: t.TempDir(), NoUserFile: !tc.user}
		_, err := loader.New(o)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestSignAndVerifyBundle: the signature covers every field; the envelope is decoded strictly.
func TestSignAndVerifyBundle(t *testing.T) {
	t.Parallel()
	pub, priv := testKey(1)
	data := bundle(t, priv, 3, managedV1)
	b, err := loader.VerifyBundle(data, []ed25519.PublicKey{pub}, bundleNow)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), b.Version)
	assert.Equal(t, managedV1, string(b.Managed))
	assert.Len(t, b.Digest(), 64)

	var env map[string]any
	require.NoError(t, json.Unmarshal(data, &env))
	for field, val := range map[string]any{"version": 4, "issued_at": "2026-03-01T10:00:00Z", "expires_at": "2026-03-09T00:00:00Z",
		"defaults": base64.StdEncoding.EncodeToString([]byte(`{}`))} {
		e := map[string]any{}
		for k, v := range env {
			e[k] = v
		}
		e[field] = val
		changed, err := json.Marshal(e)
		require.NoError(t, err)
		_, err = loader.VerifyBundle(changed, []ed25519.PublicKey{pub}, bundleNow)
		require.ErrorContains(t, err, "the signature does not verify", "changing %s", field)
	}
	for name, tc := range map[string]struct{ data, want string }{
		"duplicate key":  {strings.Replace(string(data), `"version": 3,`, `"version": 3, "version": 9,`, 1), `the key "version" appears twice`},
		"trailing data":  {string(data) + "{}", "data after the JSON object"},
		"not an object":  {`[1]`, "not a JSON object"},
		"other format":   {strings.Replace(string(data), "reins-policy-bundle/v1", "reins-policy-bundle/v2", 1), `format "reins-policy-bundle/v2"`},
		"fractional":     {strings.Replace(string(data), "2026-03-01T11:00:00Z", "2026-03-01T11:00:00.5Z", 1), "whole seconds"},
		"bad base64":     {strings.Replace(string(data), `"managed": "`, `"managed": "!`, 1), "managed: not standard base64"},
		"short sig":      {string(bytes.Replace(data, []byte(`"signature": "`), []byte(`"signature": "AAAA`), 1)), "the signature is not 64 bytes"},
		"missing fields": {`{"format": "reins-policy-bundle/v1", "version": 1}`, "are required"},
	} {
		_, err := loader.VerifyBundle([]byte(tc.data), []ed25519.PublicKey{pub}, bundleNow)
		require.ErrorIs(t, err, loader.ErrBundleRefused, name)
		assert.Contains(t, err.Error(), tc.want, name)
	}
	_, err = loader.VerifyBundle(data, nil, bundleNow)
	require.ErrorContains(t, err, "no public key is pinned")
	// Rotation: either pinned key verifies.
	other, _ := testKey(9)
	_, err = loader.VerifyBundle(data, []ed25519.PublicKey{other, pub}, bundleNow)
	require.NoError(t, err)

	for name, b := range map[string]loader.Bundle{
		"version 0":  {Issued: bundleNow, Expires: bundleNow.Add(time.Hour), Managed: []byte(`{}`)},
		"no managed": {Version: 1, Issued: bundleNow, Expires: bundleNow.Add(time.Hour)},
		"backwards":  {Version: 1, Issued: bundleNow, Expires: bundleNow, Managed: []byte(`{}`)},
	} {
		_, err := loader.SignBundle(b, priv)
		require.Error(t, err, name)
	}
}

// FuzzVerifyBundle: the bundle decoder never panics, refuses with an error matching
// ErrBundleRefused whatever it is given, and accepts only what the pinned key signed.
func FuzzVerifyBundle(f *testing.F) {
	pub, priv := testKey(1)
	good := bundle(f, priv, 3, managedV1)
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"version": 3`), []byte(`"version": 4`), 1))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"format": "reins-policy-bundle/v1", "version": 1, "issued_at": "2026-03-01T00:00:00Z", "expires_at": "2026-03-02T00:00:00Z", "managed": "e30=", "signature": "` + strings.Repeat("A", 86) + `=="}`))
	f.Add([]byte(`{"version": 1, "version": 2}`))
	f.Add([]byte(`[`))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := loader.VerifyBundle(data, []ed25519.PublicKey{pub}, bundleNow)
		if err != nil {
			require.ErrorIs(t, err, loader.ErrBundleRefused)
			require.Nil(t, b)
			return
		}
		// Whatever verified was signed by the key: re-signing it gives the same signed content.
		again, err := loader.SignBundle(*b, priv)
		require.NoError(t, err)
		b2, err := loader.VerifyBundle(again, []ed25519.PublicKey{pub}, bundleNow)
		require.NoError(t, err)
		require.Equal(t, b.Digest(), b2.Digest())
		require.Equal(t, uint64(3), b.Version, "only the seed the key signed verifies")
	})
}
