package loader

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

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
	// active built-in profile's; its Family is "custom" when the files changed anything.
	Profile profile.Profile
	// Provenance says which layer set each setting.
	Provenance Provenance
	// Skipped lists the project file's settings that were not applied because they loosen the
	// profile and the project is not trusted, in file order. Empty when the project is trusted.
	Skipped []Skipped
	// Trust is the project file's trust status, and TrustReason says why, for humans.
	Trust       Trust
	TrustReason string
	// Files are the user file and the project file, as found.
	Files []FileStatus

	def           string
	protect       []string
	user, project *parsedFile
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
	protect     []string // protected paths added to every profile: the configuration directories

	mu        sync.Mutex
	confirmed map[string]bool // hex SHA-256 of approved project file contents
	seen      []byte          // the files' fingerprint when Load last read them (see Watch)
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
	return l, nil
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

// Load reads the user file and the project file (either may be missing), validates them and
// returns the effective profile: see the package documentation's "Files" section for the
// precedence and trust rules. Any problem in either file is an error, and every problem is
// reported: the error joins one *Error per problem ([Errors]). On error, nothing is
// returned, so a host that reloads keeps its previous profile.
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
	var parsed [2]*parsedFile
	for i, r := range reads {
		if r.path == "" {
			continue
		}
		st := FileStatus{Origin: r.layer, Path: r.path}
		switch {
		case r.err == nil:
			st.Found, st.SHA256 = true, digestOf(r.data)
			f, err := parseFile(ctx, r.layer, r.path, r.data)
			if err != nil {
				errs = append(errs, err)
			}
			parsed[i] = f
		case !errors.Is(r.err, fs.ErrNotExist) || isLoadError(r.err):
			errs = append(errs, r.err)
		}
		files = append(files, st)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	loaded, err := l.resolve(ctx, parsed[0], parsed[1])
	if err != nil {
		return nil, err
	}
	loaded.Files = files
	return loaded, nil
}

// fileRead is one profile file as readProfileFile found it.
type fileRead struct {
	layer Origin
	path  string // "" when the configuration has no such file
	data  []byte
	err   error // a *Error, or an fs.ErrNotExist error for a missing file
}

// readFiles reads the user file and the project file, in that order.
func (l *Loader) readFiles(ctx context.Context) [2]fileRead {
	out := [2]fileRead{{layer: OriginUser, path: l.userPath}, {layer: OriginProject, path: l.projectPath}}
	for i := range out {
		if out[i].path != "" {
			out[i].data, out[i].err = readProfileFile(ctx, out[i].path)
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
func (l *Loader) resolve(ctx context.Context, user, project *parsedFile) (*Loaded, error) {
	b, err := build(ctx, l.opts.Default, "", user, project, false, l.protect)
	if err != nil {
		return nil, err
	}
	out := &Loaded{def: l.opts.Default, protect: l.protect, user: user, project: project, Trust: NoProject}
	if project != nil {
		out.Trust, out.TrustReason = trustedByUser(user, l.projectDir, project.digest)
		if out.Trust == Untrusted && len(b.skipped) > 0 {
			out.Trust, out.TrustReason = l.confirm(ctx, project, b.skipped, out.TrustReason)
		}
		if out.Trust != Untrusted && len(b.skipped) > 0 {
			if b, err = build(ctx, l.opts.Default, "", user, project, true, l.protect); err != nil {
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
// denied paths, host groups and rules stay in force whichever profile is active.
func (l *Loaded) Rebase(name string) (*Loaded, error) {
	base, err := profile.Builtin(name)
	if err != nil {
		return nil, err
	}
	trusted := l.Trust == TrustedByUser || l.Trust == TrustedByHost
	b, err := build(context.Background(), l.def, base.Name, l.user, l.project, trusted, l.protect)
	if err != nil {
		return nil, err
	}
	out := &Loaded{def: l.def, protect: l.protect, user: l.user, project: l.project, Trust: l.Trust, TrustReason: l.TrustReason,
		Files: append([]FileStatus(nil), l.Files...)}
	return out.finish(b)
}

func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
