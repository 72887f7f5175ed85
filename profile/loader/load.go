package loader

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reins-go/reins/profile"
)

// Default names of the profile files; a host may change every one of them ([Options]).
const (
	DefaultUserDirName      = "reins"                // under os.UserConfigDir()
	DefaultUserFile         = "profile.json"         // in the user directory
	DefaultProjectConfigDir = ".reins"               // under the project directory
	DefaultProjectFile      = "project-profile.json" // in the project configuration directory
)

// Options say where the profile files are and how to treat the project file. A nil
// *Options, and every zero field, means the documented default. A file whose name ends in
// ".yaml" or ".yml" is read as YAML, any other as JSON.
//
// Every profile the loader returns protects the directories it reads from, so an agent cannot
// edit its own permissions: the user directory (as an absolute path) and the project
// configuration directory (as a relative entry, matched in every workspace; the project file's
// name when ProjectConfigDir is "."), recorded with [OriginHost] provenance.
type Options struct {
	// Default is the built-in profile used when no file names one. Default: PROFILE-SAFE, the
	// most restrictive of the policy spec's profiles (fail closed).
	Default string
	// UserDir is the directory of the user file. Default: os.UserConfigDir()/reins; if the user
	// configuration directory is unknown, there is no user file.
	UserDir string
	// UserFile is the user file's name in UserDir. Default: "profile.json".
	UserFile string
	// NoUserFile leaves the user file out (for tests and hosts that configure the user layer
	// themselves).
	NoUserFile bool
	// ProjectDir is the project (workspace) directory. Default: none, so no project file.
	ProjectDir string
	// ProjectConfigDir is the directory of the project file, relative to ProjectDir. Default:
	// ".reins" (a host may keep the policy spec's ".exacta").
	ProjectConfigDir string
	// ProjectFile is the project file's name in ProjectConfigDir. Default:
	// "project-profile.json".
	ProjectFile string
	// Confirm is asked whether a project file that is not listed in the user file's
	// trusted_projects may loosen the profile. Nil means it may not: its loosening settings are
	// skipped (and reported), the rest applies.
	Confirm ConfirmFunc

	// ManagedFile is the managed profile file: an organisation's settings, applied last, that
	// no user file, project file, profile switch or grant can loosen (see the package
	// documentation, "Managed tier"). Default: ManagedDir()/managed-profile.json
	// (/etc/reins/managed-profile.json on Linux). A missing file is no managed tier. Ignored
	// when Bundle is set.
	ManagedFile string
	// NoManagedFile leaves the managed file out (tests, and hosts that have no managed tier or
	// take it from a bundle only).
	NoManagedFile bool
	// Bundle, when not nil, takes the managed tier (and the organisation's defaults) from a
	// signed policy bundle instead of the managed file (see the package documentation,
	// "Signed policy bundles").
	Bundle *BundleOptions
}

// BundleOptions configure signed policy bundles ([Options.Bundle]).
type BundleOptions struct {
	// File is the bundle's path. Default: ManagedDir()/policy-bundle.json. A missing file is
	// a refused bundle (OnRefusal applies), not the absence of a managed tier.
	File string
	// Keys are the Ed25519 public keys the host pins: a bundle must be signed with one of them
	// (list two while rotating keys). Required.
	Keys []ed25519.PublicKey
	// Versions keeps the newest bundle used, so an older one put back in its place is refused,
	// across restarts. Default: a FileVersionStore at <user directory>/policy-bundle.seen.json
	// (beside the user file, in the directory every loaded profile protects from the agent);
	// New fails when there is no user directory and no store is given.
	Versions VersionStore
	// OnRefusal says what a refused bundle does: KeepLast (the default) or DenyAll.
	OnRefusal Refusal
	// Now tells the time bundles are checked against (expiry). Default: time.Now.
	Now func() time.Time
}

// Refusal says what the loader does with a refused policy bundle ([BundleOptions.OnRefusal]).
type Refusal uint8

const (
	// KeepLast: Load returns the refusal, a *BundleError matching ErrBundleRefused, and nothing
	// else, so a host keeps the profile it has and a run stays on what it had (at start, with
	// nothing to keep, the host cannot start a run). The default.
	KeepLast Refusal = iota
	// DenyAll: Load returns a profile that denies everything (mode emergency-stop, capped there
	// by its managed tier, grants forbidden), with the refusal in [Loaded.BundleRefused], so a
	// host that reloads it denies every action until a valid bundle arrives.
	DenyAll
)

// String returns "keep-last" or "deny-all".
func (r Refusal) String() string {
	switch r {
	case KeepLast:
		return "keep-last"
	case DenyAll:
		return "deny-all"
	}
	return fmt.Sprintf("Refusal(%d)", uint8(r))
}

// ConfirmFunc asks the user whether a project file may loosen the profile. It returns true to
// trust this content of the project file (see [TrustRequest]); false, or an error, leaves the
// loosening settings out. It is called only when the project file loosens something and is not
// already trusted, at most once per [Loader.Load].
type ConfirmFunc func(ctx context.Context, req TrustRequest) (bool, error)

// TrustRequest is what a [ConfirmFunc] is asked to approve: one project file's content.
type TrustRequest struct {
	// ProjectDir is the project directory, absolute.
	ProjectDir string
	// File is the project file's path.
	File string
	// SHA256 is the hex SHA-256 of the file's content; an approval holds for this content only.
	// The user file's trusted_projects records the same value to trust it permanently.
	SHA256 string
	// Loosenings are the settings that would apply only with trust.
	Loosenings []Skipped
}

// Trust says whether the project file may loosen the profile, and why.
type Trust uint8

const (
	// NoProject: there is no project file.
	NoProject Trust = iota
	// Untrusted: the project file's loosening settings (if any) were not applied; see
	// [Loaded.Skipped] and [Loaded.TrustReason].
	Untrusted
	// TrustedByUser: the user file lists the project in trusted_projects with the SHA-256 of
	// this content.
	TrustedByUser
	// TrustedByHost: the confirmation callback approved this content.
	TrustedByHost
)

// String returns "no project file", "untrusted", "trusted by the user file" or "confirmed by
// the host".
func (t Trust) String() string {
	switch t {
	case NoProject:
		return "no project file"
	case Untrusted:
		return "untrusted"
	case TrustedByUser:
		return "trusted by the user file"
	case TrustedByHost:
		return "confirmed by the host"
	}
	return fmt.Sprintf("Trust(%d)", uint8(t))
}

// FileStatus is one profile file as a load found it.
type FileStatus struct {
	Origin Origin
	// Path is where the file is looked for.
	Path string
	// Found reports whether it exists; a missing file is not an error.
	Found bool
	// SHA256 is the hex SHA-256 of its content, when found.
	SHA256 string
}

// Loaded is the result of loading the profile files: the effective profile and where each of
// its settings came from. It is immutable; the gate compiles Profile.
type Loaded struct {
	// Profile is the effective profile. It compiles ([profile.Profile.Compile]). Its Name is the
	// active built-in profile's; its Family is "custom" when the files changed anything. Under a
	// managed tier, Profile.Managed holds it (its caps, its rules and whether it allows managed
	// rules only): a run takes it from there and keeps it through every switch.
	Profile profile.Profile
	// Provenance says which layer set each setting.
	Provenance Provenance
	// Skipped lists the settings of the user and project files that were not applied, in file
	// order: the project file's that loosen the profile when the project is not trusted, and
	// those the managed tier dropped (Skipped.Managed).
	Skipped []Skipped
	// Trust is the project file's trust status, and TrustReason says why, for humans.
	Trust       Trust
	TrustReason string
	// Files are the user file and the project file, as found, then the managed file when it
	// exists, or the policy bundle when one is configured.
	Files []FileStatus
	// Bundle is the signed policy bundle the managed tier came from, or nil.
	Bundle *BundleInfo
	// BundleRefused is why the policy bundle was refused, when BundleOptions.OnRefusal is
	// DenyAll (Profile then denies everything); nil otherwise.
	BundleRefused error

	def     string
	protect []string
	ls      layers
}

// BundleInfo describes the verified policy bundle a load used.
type BundleInfo struct {
	File            string
	Version         uint64
	Issued, Expires time.Time
	// Digest is the hex SHA-256 of its signed content ([Bundle.Digest]).
	Digest string
}

// Loader loads the profile files of one configuration, again and again: a host calls Load at
// start and again to reload. It remembers the project file contents the confirmation callback
// approved, so an unchanged file is not asked about twice, and an edited one is. A Loader is
// safe for concurrent use.
type Loader struct {
	opts        Options
	userPath    string
	projectPath string
	projectDir  string
	managedPath string         // the managed file or the bundle; "" for none
	bundle      *BundleOptions // nil: managedPath is a managed profile file
	versions    VersionStore
	protect     []string // protected paths added to every profile: the configuration directories

	mu        sync.Mutex
	confirmed map[string]bool // hex SHA-256 of approved project file contents
	seen      []byte          // the files' fingerprint when Load last read them (see Watch)
	inUse     BundleSeen      // the newest bundle this Loader used
	expires   time.Time       // when the bundle in use expires (see Watch); zero for none
}

// New checks the options and returns a Loader. Nothing is read yet.
func New(opts *Options) (*Loader, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Default == "" {
		o.Default = profile.ProfileSafe
	}
	def, err := profile.Builtin(o.Default)
	if err != nil {
		return nil, fmt.Errorf("profile: Options.Default: %w", err)
	}
	o.Default = def.Name
	l := &Loader{opts: o, confirmed: map[string]bool{}}
	if !o.NoUserFile {
		dir := o.UserDir
		if dir == "" {
			if base, err := os.UserConfigDir(); err == nil {
				dir = filepath.Join(base, DefaultUserDirName)
			}
		}
		name := o.UserFile
		if name == "" {
			name = DefaultUserFile
		}
		if err := checkBaseName("UserFile", name); err != nil {
			return nil, err
		}
		if dir != "" {
			l.userPath = filepath.Join(dir, name)
			if abs, err := filepath.Abs(dir); err == nil {
				l.protect = append(l.protect, filepath.ToSlash(abs))
			}
		}
	}
	if o.ProjectDir != "" {
		abs, err := filepath.Abs(o.ProjectDir)
		if err != nil {
			return nil, fmt.Errorf("profile: Options.ProjectDir: %w", err)
		}
		l.projectDir = abs
		cdir := o.ProjectConfigDir
		if cdir == "" {
			cdir = DefaultProjectConfigDir
		}
		if filepath.IsAbs(cdir) || !filepath.IsLocal(cdir) {
			return nil, fmt.Errorf("profile: Options.ProjectConfigDir %q is not a relative path inside the project", cdir)
		}
		name := o.ProjectFile
		if name == "" {
			name = DefaultProjectFile
		}
		if err := checkBaseName("ProjectFile", name); err != nil {
			return nil, err
		}
		l.projectPath = filepath.Join(abs, cdir, name)
		if c := filepath.ToSlash(filepath.Clean(cdir)); c != "." {
			l.protect = append(l.protect, c)
		} else {
			l.protect = append(l.protect, name)
		}
	}
	if err := l.managedOptions(); err != nil {
		return nil, err
	}
	return l, nil
}

// managedOptions checks and fills in the managed tier's options.
func (l *Loader) managedOptions() error {
	o := &l.opts
	if o.Bundle == nil {
		if o.NoManagedFile {
			return nil
		}
		l.managedPath = o.ManagedFile
		if l.managedPath == "" && ManagedDir() != "" {
			l.managedPath = filepath.Join(ManagedDir(), DefaultManagedFile)
		}
		if l.managedPath != "" {
			abs, err := filepath.Abs(l.managedPath)
			if err != nil {
				return fmt.Errorf("profile: Options.ManagedFile: %w", err)
			}
			l.managedPath = abs
		}
		return nil
	}
	b := *o.Bundle
	b.Keys = slices.Clone(b.Keys)
	if len(b.Keys) == 0 {
		return errors.New("profile: Options.Bundle.Keys: no public key is pinned")
	}
	for i, k := range b.Keys {
		if len(k) != ed25519.PublicKeySize {
			return fmt.Errorf("profile: Options.Bundle.Keys[%d] is %d bytes, not an Ed25519 public key", i, len(k))
		}
	}
	if b.OnRefusal > DenyAll {
		return fmt.Errorf("profile: Options.Bundle.OnRefusal %d is not KeepLast or DenyAll", b.OnRefusal)
	}
	if b.File == "" {
		if ManagedDir() == "" {
			return errors.New("profile: Options.Bundle.File: no system configuration directory on this platform")
		}
		b.File = filepath.Join(ManagedDir(), DefaultBundleFile)
	}
	abs, err := filepath.Abs(b.File)
	if err != nil {
		return fmt.Errorf("profile: Options.Bundle.File: %w", err)
	}
	b.File = abs
	if b.Now == nil {
		b.Now = time.Now
	}
	l.versions = b.Versions
	if l.versions == nil {
		if l.userPath == "" {
			return errors.New("profile: Options.Bundle.Versions: there is no user directory to keep the newest bundle's version in; give a VersionStore")
		}
		l.versions = NewFileVersionStore(filepath.Join(filepath.Dir(l.userPath), "policy-bundle.seen.json"))
	}
	l.bundle, l.managedPath = &b, b.File
	return nil
}

func checkBaseName(field, name string) error {
	if name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("profile: Options.%s %q is not a file name", field, name)
	}
	return nil
}

// Paths returns where the loader looks for the user file and the project file ("" when there
// is none), for a host that watches them.
func (l *Loader) Paths() (user, project string) { return l.userPath, l.projectPath }

// Load reads the user file, the project file and the managed tier (the managed file, or a signed
// policy bundle; any may be missing, but a configured bundle may not), validates them and
// returns the effective profile: see the package documentation for the precedence, trust and
// managed-tier rules. Any problem in a file is an error, and every problem is reported: the
// error joins one *Error per problem ([Errors]). On error, nothing is returned, so a host that
// reloads keeps its previous profile. A refused bundle is a *BundleError (ErrBundleRefused)
// under KeepLast, and a profile that denies everything under DenyAll.
func (l *Loader) Load(ctx context.Context) (*Loaded, error) {
	// One read of each file serves both the load and Watch's fingerprint, so a change made
	// while loading is seen by the next Watch tick.
	reads := l.readFiles(ctx)
	fp := fingerprint(reads)
	l.mu.Lock()
	l.seen = fp
	l.mu.Unlock()
	var errs []error
	var files []FileStatus
	var ls layers
	var refused *BundleError
	var bundle *Bundle
	for _, r := range reads {
		if r.path == "" {
			continue
		}
		st := FileStatus{Origin: r.layer, Path: r.path}
		if r.err == nil {
			st.Found, st.SHA256 = true, digestOf(r.data)
		}
		if st.Found || r.layer != OriginManaged || l.bundle != nil {
			files = append(files, st) // a missing managed file is no managed tier: not listed
		}
		if r.layer == OriginManaged && l.bundle != nil {
			bundle, ls.managed, ls.defaults, refused = l.openBundle(ctx, r)
			if bundle != nil {
				ls.source = fmt.Sprintf("bundle v%d %s", bundle.Version, r.path)
			}
			continue
		}
		switch {
		case r.err == nil:
			f, err := parseFile(ctx, r.layer, r.path, r.data)
			if err != nil {
				errs = append(errs, err)
			}
			switch r.layer {
			case OriginUser:
				ls.user = f
			case OriginProject:
				ls.project = f
			case OriginManaged:
				ls.managed, ls.source = f, "file "+r.path
			}
		case !errors.Is(r.err, fs.ErrNotExist) || isLoadError(r.err):
			errs = append(errs, r.err)
		}
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	if refused != nil {
		return l.refuse(refused, files)
	}
	protect := l.protect
	if ls.managed != nil {
		protect = append(slices.Clone(protect), filepath.ToSlash(filepath.Dir(l.managedPath)))
	}
	loaded, err := l.resolve(ctx, ls, protect)
	if err != nil {
		if bundle != nil && ctx.Err() == nil && fromFile(err, l.managedPath) {
			return l.refuse(&BundleError{File: l.managedPath, Version: bundle.Version, Reason: "its profiles do not load: " + err.Error(), Err: err}, files)
		}
		return nil, err
	}
	loaded.Files = files
	if bundle != nil {
		if refused := l.use(ctx, bundle); refused != nil {
			return l.refuse(refused, files)
		}
		loaded.Bundle = &BundleInfo{File: l.managedPath, Version: bundle.Version, Issued: bundle.Issued, Expires: bundle.Expires, Digest: bundle.Digest()}
	}
	return loaded, nil
}

// fromFile reports whether some *Error in err names a file at path (the bundle's profiles are
// named path#managed and path#defaults).
func fromFile(err error, path string) bool {
	for _, e := range Errors(err) {
		if e.File == path || strings.HasPrefix(e.File, path+"#") {
			return true
		}
	}
	return false
}

// openBundle verifies the bundle read as r and parses its profiles. A refusal is a *BundleError.
func (l *Loader) openBundle(ctx context.Context, r fileRead) (*Bundle, *parsedFile, *parsedFile, *BundleError) {
	refuse := func(v uint64, err error, format string, args ...any) (*Bundle, *parsedFile, *parsedFile, *BundleError) {
		return nil, nil, nil, &BundleError{File: r.path, Version: v, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	switch {
	case r.err != nil && !isLoadError(r.err) && errors.Is(r.err, fs.ErrNotExist):
		return refuse(0, r.err, "there is no bundle at this path")
	case r.err != nil:
		return refuse(0, r.err, "%v", r.err)
	}
	b, err := VerifyBundle(r.data, l.bundle.Keys, l.bundle.Now())
	if err != nil {
		var be *BundleError
		if errors.As(err, &be) {
			be.File = r.path
			return nil, nil, nil, be
		}
		return refuse(0, err, "%v", err)
	}
	if why := l.replayed(ctx, b); why != "" {
		return refuse(b.Version, nil, "%s", why)
	}
	parse := func(layer Origin, name string, data []byte) (*parsedFile, error) {
		f, err := parseFile(ctx, layer, r.path+"#"+name, data)
		if f != nil {
			f.bundle = b.Version
		}
		return f, err
	}
	managed, err := parse(OriginManaged, "managed", b.Managed)
	if err != nil {
		return refuse(b.Version, err, "its managed profile is not valid: %v", err)
	}
	var defaults *parsedFile
	if b.Defaults != nil {
		if defaults, err = parse(OriginDefaults, "defaults", b.Defaults); err != nil {
			return refuse(b.Version, err, "its defaults profile is not valid: %v", err)
		}
	}
	return b, managed, defaults, nil
}

// replayed says why b is older than the bundle in use, or "": its version is below the newest
// recorded (in the VersionStore, or used by this Loader), or equal to it with other content.
func (l *Loader) replayed(ctx context.Context, b *Bundle) string {
	seen, err := l.versions.Seen(ctx)
	if err != nil {
		return "the newest bundle used cannot be read, so a replay cannot be ruled out: " + err.Error()
	}
	l.mu.Lock()
	if l.inUse.Version > seen.Version {
		seen = l.inUse
	}
	l.mu.Unlock()
	switch {
	case b.Version < seen.Version:
		return fmt.Sprintf("it is older than the bundle in use (version %d): a replay", seen.Version)
	case b.Version == seen.Version && b.Digest() != seen.Digest:
		return fmt.Sprintf("another bundle with the same version %d was used: a new bundle needs a higher version", b.Version)
	}
	return ""
}

// use records b as the bundle in use: in the VersionStore (a failure refuses it, since a replay
// after a restart could no longer be caught) and in the Loader.
func (l *Loader) use(ctx context.Context, b *Bundle) *BundleError {
	seen := BundleSeen{Version: b.Version, Digest: b.Digest()}
	if err := l.versions.Record(ctx, seen); err != nil {
		return &BundleError{File: l.managedPath, Version: b.Version, Reason: "its version cannot be recorded: " + err.Error(), Err: err}
	}
	l.mu.Lock()
	l.inUse, l.expires = seen, b.Expires
	l.mu.Unlock()
	return nil
}

// refuse applies BundleOptions.OnRefusal to a refused bundle.
func (l *Loader) refuse(e *BundleError, files []FileStatus) (*Loaded, error) {
	if l.bundle.OnRefusal != DenyAll {
		return nil, e
	}
	m := &profile.Managed{Source: "refused bundle " + l.managedPath, MaxMode: profile.ModeEmergencyStop, RulesOnly: true}
	base := profile.MustBuiltin(profile.ModeEmergencyStop.String())
	p, err := m.Impose(base)
	if err != nil {
		return nil, errors.Join(e, err)
	}
	src := Source{Origin: OriginManaged, File: l.managedPath, Note: "the bundle was refused: " + e.Reason}
	prov := Provenance{m: map[Setting]Source{}}
	for _, f := range []string{"active_profile", "permission_mode", "autonomy"} {
		prov.set(f, "", src)
	}
	return &Loaded{Profile: p, Provenance: prov, Trust: NoProject, Files: files, BundleRefused: e, def: l.opts.Default}, nil
}

// fileRead is one profile file as readProfileFile found it.
type fileRead struct {
	layer Origin
	path  string // "" when the configuration has no such file
	data  []byte
	err   error // a *Error, or an fs.ErrNotExist error for a missing file
}

// readFiles reads the user file, the project file and the managed file or bundle, in that
// order. The managed file must be safe from other users (unsafeOwner); a bundle is trusted for
// its signature, wherever it lies.
func (l *Loader) readFiles(ctx context.Context) [3]fileRead {
	out := [3]fileRead{{layer: OriginUser, path: l.userPath}, {layer: OriginProject, path: l.projectPath},
		{layer: OriginManaged, path: l.managedPath}}
	for i := range out {
		if out[i].path == "" {
			continue
		}
		if ctx.Err() != nil && out[i].layer == OriginManaged {
			// The reads of the user and project files report the context's error, naming
			// them; the managed file, usually absent, is not read.
			out[i].path = ""
			continue
		}
		out[i].data, out[i].err = readProfileFile(ctx, out[i].path)
		if out[i].layer == OriginManaged && l.bundle == nil && out[i].err == nil {
			if why := unsafeOwner(out[i].path); why != "" {
				out[i].data, out[i].err = nil, &Error{File: out[i].path, Reason: "the managed file is not safe from other users: " + why}
			}
		}
	}
	return out
}

func isLoadError(err error) bool {
	var le *Error
	return errors.As(err, &le)
}

// Load is New(opts) followed by Load: it reads the profile files once.
func Load(ctx context.Context, opts *Options) (*Loaded, error) {
	l, err := New(opts)
	if err != nil {
		return nil, err
	}
	return l.Load(ctx)
}

// resolve merges the layers, deciding trust when the project file loosens anything.
func (l *Loader) resolve(ctx context.Context, ls layers, protect []string) (*Loaded, error) {
	s := spec{def: l.opts.Default, ls: ls, protect: protect}
	b, err := build(ctx, s)
	if err != nil {
		return nil, err
	}
	out := &Loaded{def: l.opts.Default, protect: protect, ls: ls, Trust: NoProject}
	if ls.project != nil {
		out.Trust, out.TrustReason = trustedByUser(ls.user, l.projectDir, ls.project.digest)
		// Trust brings back only what a lack of trust left out, not what the managed tier did.
		var loosenings []Skipped
		for _, sk := range b.skipped {
			if !sk.Managed {
				loosenings = append(loosenings, sk)
			}
		}
		if out.Trust == Untrusted && len(loosenings) > 0 {
			out.Trust, out.TrustReason = l.confirm(ctx, ls.project, loosenings, out.TrustReason)
		}
		if out.Trust != Untrusted && len(loosenings) > 0 {
			s.allowProject = true
			if b, err = build(ctx, s); err != nil {
				return nil, err
			}
		}
	}
	return out.finish(b)
}

func (out *Loaded) finish(b *builder) (*Loaded, error) {
	if _, err := b.p.Compile(); err != nil {
		return nil, fmt.Errorf("profile: the effective profile does not compile: %w", err)
	}
	out.Profile, out.Provenance, out.Skipped = b.p, b.prov, b.skipped
	return out, nil
}

// confirm asks the host, unless it already approved this content.
func (l *Loader) confirm(ctx context.Context, project *parsedFile, skipped []Skipped, why string) (Trust, string) {
	l.mu.Lock()
	done := l.confirmed[project.digest]
	l.mu.Unlock()
	if done {
		return TrustedByHost, "the host confirmed this content of the project file earlier"
	}
	if l.opts.Confirm == nil {
		return Untrusted, why + "; no confirmation callback"
	}
	ok, err := l.opts.Confirm(ctx, TrustRequest{
		ProjectDir: l.projectDir, File: project.path, SHA256: project.digest,
		Loosenings: append([]Skipped(nil), skipped...),
	})
	switch {
	case err != nil:
		return Untrusted, why + "; the confirmation failed: " + err.Error()
	case !ok:
		return Untrusted, why + "; the host declined"
	}
	l.mu.Lock()
	l.confirmed[project.digest] = true
	l.mu.Unlock()
	return TrustedByHost, "the host confirmed this content of the project file"
}

// trustedByUser checks the user file's trusted_projects for the project and its digest.
func trustedByUser(user *parsedFile, projectDir, digest string) (Trust, string) {
	if user == nil {
		return Untrusted, "the project is not trusted: there is no user file"
	}
	want := canonicalDir(projectDir)
	listed := false
	for _, tp := range user.cfg.TrustedProjects {
		dir, err := expandHome(tp.Path)
		if err != nil || canonicalDir(dir) != want {
			continue
		}
		if tp.SHA256 == digest {
			return TrustedByUser, fmt.Sprintf("%s lists the project in trusted_projects with this content's SHA-256", user.path)
		}
		listed = true
	}
	if listed {
		return Untrusted, fmt.Sprintf("the project is not trusted: %s lists it in trusted_projects with another SHA-256, so the project file changed after it was trusted", user.path)
	}
	return Untrusted, fmt.Sprintf("the project is not trusted: it is not listed in trusted_projects of %s", user.path)
}

func canonicalDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, p[1:]), nil
}

// Rebase returns the files' settings applied to another built-in profile, as when the host
// switches the active profile: name replaces the active_profile of the files (its provenance
// is [OriginHost]), and everything else applies as in the load, with the trust decided
// then (Rebase never asks the confirmation callback; reload to ask again). So the user's
// denied paths, host groups and rules stay in force whichever profile is active, and so does
// the managed tier: a profile past its caps is lowered to them. A Loaded that denies
// everything for a refused bundle stays so: Rebase returns it unchanged.
func (l *Loaded) Rebase(name string) (*Loaded, error) {
	base, err := profile.Builtin(name)
	if err != nil {
		return nil, err
	}
	if l.BundleRefused != nil {
		return l, nil
	}
	trusted := l.Trust == TrustedByUser || l.Trust == TrustedByHost
	b, err := build(context.Background(), spec{def: l.def, override: base.Name, ls: l.ls, allowProject: trusted, protect: l.protect})
	if err != nil {
		return nil, err
	}
	out := &Loaded{def: l.def, protect: l.protect, ls: l.ls, Trust: l.Trust, TrustReason: l.TrustReason,
		Files: append([]FileStatus(nil), l.Files...), Bundle: l.Bundle}
	return out.finish(b)
}

func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
