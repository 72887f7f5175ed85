package hardened

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// Config configures [New]. A zero value with Root set is
// the strict default: workspace writable, network denied, every layer
// required.
type Config struct {
	// Root is the workspace, writable inside the sandbox. Required.
	Root string
	// Policy adds writable paths, denied paths, the network switch and
	// the env allowlist (empty means [sandbox.DefaultEnvAllowlist]).
	Policy sandbox.FsNetPolicy
	// ReadOnlyPaths are visible read-only inside the sandbox; nil means
	// [DefaultReadOnlyPaths]. Paths that do not exist are skipped.
	ReadOnlyPaths []string
	// MinLandlockABI is the lowest Landlock ABI accepted; zero means
	// [DefaultMinLandlockABI]. The sandbox uses the highest ABI the
	// kernel offers.
	MinLandlockABI int
	// Limits are resource limits for the command; zero fields keep the
	// inherited value. Core dumps are always disabled.
	Limits Limits
	// BestEffort lets the command run when a layer is missing, and lists
	// the missing layers in Result.Confinement.Missing with a warning.
	//
	// Warning: with BestEffort a command may run with no confinement at
	// all (on a kernel without Landlock and seccomp, for example). Use it
	// only where a weaker sandbox is better than none, and check
	// Confinement.Missing.
	BestEffort bool
	// Caches says whether the command sees the launcher's caches (the
	// user cache directory and Go's module cache) instead of its own
	// empty ones; the default, [CachesPrivate], shares nothing.
	Caches CacheSharing
	// SimulateMissing makes the listed layers behave as if the host
	// lacked them. It exists to test a host's handling of a degraded or
	// refusing sandbox; production code leaves it empty.
	SimulateMissing []sandbox.Layer
}

// CacheSharing says how the hardened sandbox shares the launcher's
// caches with the command.
type CacheSharing int

const (
	// CachesPrivate: the command gets an empty, private HOME and
	// XDG_CACHE_HOME (so GOCACHE, GOMODCACHE, npm's, pip's and cargo's
	// caches too), removed after the run. The default.
	CachesPrivate CacheSharing = iota
	// CachesReadOnly: the launcher's user cache directory and Go module
	// cache are visible read-only, and GOMODCACHE points at the module
	// cache; what the command writes goes to its private caches.
	CachesReadOnly
	// CachesReadWrite: the launcher's user cache directory and Go module
	// cache are writable, and XDG_CACHE_HOME, GOCACHE and GOMODCACHE
	// point at them. A command can then poison what later builds on the
	// host read: use it for trusted commands only.
	CachesReadWrite
)

// Limits are resource limits (setrlimit(2)) applied to the command.
type Limits struct {
	CPUSeconds   uint64 // RLIMIT_CPU
	FileSize     uint64 // RLIMIT_FSIZE, bytes
	AddressSpace uint64 // RLIMIT_AS, bytes
	OpenFiles    uint64 // RLIMIT_NOFILE
	Processes    uint64 // RLIMIT_NPROC (counted per user on the host)
}

// DefaultMinLandlockABI is the lowest Landlock ABI the hardened backend
// accepts by default: ABI 3 is the first that controls truncation.
const DefaultMinLandlockABI = 3

// DefaultReadOnlyPaths returns the system directories visible read-only
// in the hardened sandbox. Home directories, /tmp, /run and /var are not
// among them.
func DefaultReadOnlyPaths() []string {
	return []string{"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}
}

// Sandbox runs commands in the local-hardened sandbox. See the package
// documentation for what it enforces.
type Sandbox struct {
	cfg      Config
	root     string
	writable []string // root first, then AllowedPaths, resolved
	readOnly []string
	match    pathmatch.Matcher
	envAllow []string
	// noUserNS latches once creating a user namespace failed, so later
	// runs do not pay for the failed attempt.
	noUserNS atomic.Bool
	// ownerUID and ownerGID own the workspace root: the identity of the
	// command when the launcher is root.
	ownerUID, ownerGID int
	// notFound are configured AllowedPaths that do not exist: they grant
	// nothing, and each run says so in its warnings.
	notFound []string
	// cacheRO, cacheRW and cacheEnv share the launcher's caches.
	cacheRO, cacheRW, cacheEnv []string
	// pool holds the launchers that start the commands (Linux).
	pool *launchers
	// perRun makes every run start a child of its own, as with Limits
	// (tests of that path set it).
	perRun bool
	// starts counts the launchers started.
	starts atomic.Int64
}

// CredentialStores returns the host files that hold credentials and are
// masked in the hardened sandbox whatever the policy says: the shadow
// password and group files and their backups.
func CredentialStores() []string {
	return []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"}
}

var _ sandbox.Sandbox = (*Sandbox)(nil)

// New validates cfg and returns the hardened backend. It does not
// probe the kernel; [Sandbox.Probe] does, and Run refuses to run (exit
// code 127) when a required layer is missing.
func New(cfg Config) (*Sandbox, error) {
	root, err := pathmatch.ResolveRoot(cfg.Root, "Config.Root")
	if err != nil {
		return nil, err
	}
	m, err := pathmatch.New(append(append([]string(nil), cfg.Policy.DeniedPaths...), CredentialStores()...))
	if err != nil {
		return nil, err
	}
	h := &Sandbox{cfg: cfg, root: root, match: m, pool: &launchers{}}
	runtime.AddCleanup(h, func(ls *launchers) { ls.close() }, h.pool)
	if uid, gid, ok := fileOwner(root); ok {
		h.ownerUID, h.ownerGID = uid, gid
	}
	h.cfg.Policy.AllowedPaths = append([]string(nil), cfg.Policy.AllowedPaths...)
	h.cfg.Policy.DeniedPaths = append([]string(nil), cfg.Policy.DeniedPaths...)
	h.cfg.SimulateMissing = append([]sandbox.Layer(nil), cfg.SimulateMissing...)
	h.writable = []string{root}
	for i, p := range cfg.Policy.AllowedPaths {
		if p != "" && filepath.IsAbs(p) {
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				// Grants nothing; every run reports it.
				h.notFound = append(h.notFound, p)
				continue
			}
		}
		r, err := pathmatch.ResolveRoot(p, fmt.Sprintf("Config.Policy.AllowedPaths[%d]", i))
		if err != nil {
			return nil, err
		}
		if r == "/" {
			return nil, fmt.Errorf("hardened: Config.Policy.AllowedPaths[%d] is the file-system root", i)
		}
		h.writable = append(h.writable, r)
	}
	if root == "/" {
		return nil, fmt.Errorf("hardened: Config.Root is the file-system root")
	}
	ro := cfg.ReadOnlyPaths
	if ro == nil {
		ro = DefaultReadOnlyPaths()
	}
	for i, p := range ro {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("hardened: Config.ReadOnlyPaths[%d] %q is not absolute", i, p)
		}
		if filepath.Clean(p) == "/" {
			return nil, fmt.Errorf("hardened: Config.ReadOnlyPaths[%d] is the file-system root", i)
		}
		h.readOnly = append(h.readOnly, readOnlyEntries(filepath.Clean(p))...)
	}
	if cfg.MinLandlockABI < 0 {
		return nil, fmt.Errorf("hardened: Config.MinLandlockABI %d is negative", cfg.MinLandlockABI)
	}
	h.envAllow = cfg.Policy.EnvAllowlist
	if len(h.envAllow) == 0 {
		h.envAllow = sandbox.DefaultEnvAllowlist()
	}
	switch cfg.Caches {
	case CachesPrivate:
	case CachesReadOnly, CachesReadWrite:
		h.shareCaches(cfg.Caches)
		h.readOnly = append(h.readOnly, h.cacheRO...)
	default:
		return nil, fmt.Errorf("hardened: Config.Caches: unknown value %d", cfg.Caches)
	}
	for _, l := range cfg.SimulateMissing {
		if !knownLayer(l) {
			return nil, fmt.Errorf("hardened: Config.SimulateMissing: unknown layer %q", l)
		}
	}
	return h, nil
}

// shareCaches finds the launcher's cache directories and records how the
// command sees them.
func (h *Sandbox) shareCaches(mode CacheSharing) {
	var dirs []string
	userCache, _ := os.UserCacheDir()
	if userCache != "" {
		dirs = append(dirs, userCache)
	}
	modCache := os.Getenv("GOMODCACHE")
	if modCache == "" {
		if gp := strings.Split(os.Getenv("GOPATH"), string(os.PathListSeparator))[0]; gp != "" {
			modCache = filepath.Join(gp, "pkg", "mod")
		} else if home := pathmatch.HomeDir(); home != "" {
			modCache = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	if modCache != "" {
		dirs = append(dirs, modCache)
	}
	for _, d := range dirs {
		r, err := filepath.EvalSymlinks(d)
		if err != nil || !filepath.IsAbs(r) || r == "/" {
			continue
		}
		if mode == CachesReadWrite {
			h.cacheRW = append(h.cacheRW, r)
		} else {
			h.cacheRO = append(h.cacheRO, r)
		}
	}
	if modCache != "" {
		h.cacheEnv = append(h.cacheEnv, "GOMODCACHE="+modCache)
	}
	if mode == CachesReadWrite && userCache != "" {
		h.cacheEnv = append(h.cacheEnv, "XDG_CACHE_HOME="+userCache, "GOCACHE="+filepath.Join(userCache, "go-build"))
	}
}

func knownLayer(l sandbox.Layer) bool {
	switch l {
	case sandbox.LayerUserNS, sandbox.LayerMountNS, sandbox.LayerPIDNS, sandbox.LayerIPCNS, sandbox.LayerNetNS, sandbox.LayerCaps, sandbox.LayerNoNewPrivs,
		sandbox.LayerLandlock, sandbox.LayerSeccomp, sandbox.LayerRlimits, sandbox.LayerFDs, sandbox.LayerSession, sandbox.LayerIdentity:
		return true
	}
	return false
}

// Root returns the resolved workspace root.
func (h *Sandbox) Root() string { return h.root }

// EnforcesConfine reports whether h enforces [sandbox.Command.Confine]
// (see [sandbox.Enforcing]): true unless Config.BestEffort is set, which
// may run a command with no confinement at all. A best-effort sandbox
// refuses a command with Confine set.
func (h *Sandbox) EnforcesConfine() bool { return !h.cfg.BestEffort }

func (h *Sandbox) simulated(l sandbox.Layer) bool {
	for _, s := range h.cfg.SimulateMissing {
		if s == l {
			return true
		}
	}
	return false
}

func (h *Sandbox) minABI() int {
	if h.cfg.MinLandlockABI == 0 {
		return DefaultMinLandlockABI
	}
	return h.cfg.MinLandlockABI
}

// protectedPaths walks the writable directories and returns, resolved,
// the existing paths that match a denied entry: masks to hide and
// write-protected paths (.git, .envrc, ...) to keep read-only. Absolute
// denied entries that exist are masks too. It does not descend into a
// matched directory.
func (h *Sandbox) protectedPaths() (masks, readOnly []string, err error) {
	return pathmatch.FindProtected(h.match, h.writable)
}

// systemTrees are the read-only directories that are not scanned for
// secrets: they hold what the host's package manager installed, some
// 150,000 entries on a typical host (0.3 to 5 seconds to walk), and
// nothing a user put there. Every other read-only path is scanned.
var systemTrees = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// maxReadOnlyScan bounds the entries scanned in the read-only paths
// when a launcher (or a one-shot child) starts.
const maxReadOnlyScan = 200000

// readOnlyMasks scans the read-only paths, but the system trees and what
// lies in the writable roots (scanned before every run), for secrets
// (read-and-write protected names: .env, .ssh, id_ed25519, ...): a
// secret inside a read-only directory is masked like one in the
// workspace. More than maxReadOnlyScan entries is an error: the sandbox
// cannot say what it shows.
func (h *Sandbox) readOnlyMasks() ([]string, error) {
	var dirs []string
	for _, r := range h.readOnly {
		if fi, err := os.Lstat(r); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue // recreated as a link: what it leads to is listed too
		}
		skip := false
		for _, t := range append(append([]string(nil), systemTrees...), h.writable...) {
			skip = skip || fspath.Within(r, t)
		}
		for _, t := range append(append([]string(nil), h.cacheRW...), h.cacheRO...) {
			skip = skip || fspath.Within(r, t) // shared caches are shown as they are
		}
		if !skip {
			dirs = append(dirs, r)
		}
	}
	if len(dirs) == 0 {
		return nil, nil
	}
	masks, _, err := pathmatch.WalkProtectedBounded(h.match, dirs, maxReadOnlyScan)
	if err != nil {
		return nil, fmt.Errorf("scanning the read-only paths for secrets: %w; narrow Config.ReadOnlyPaths", err)
	}
	return masks, nil
}

// protectedSet indexes the protected paths found before a run.
func protectedSet(lists ...[]string) map[string]bool {
	set := map[string]bool{}
	for _, l := range lists {
		for _, p := range l {
			set[p] = true
		}
	}
	return set
}

// createdProtected walks the writable directories again after a run and
// reports every protected path that was not there before: the kernel
// cannot stop a command from creating a new .git or .envrc in its
// workspace, so the run reports it for the host to act on.
func (h *Sandbox) createdProtected(before map[string]bool) []sandbox.Violation {
	// A command writes only in the writable directories: only they are
	// walked again.
	masks, ro, err := pathmatch.WalkProtected(h.match, h.writable)
	return h.created(before, masks, ro, err)
}

// created reports the protected paths of a scan after a run (masks and
// ro, or the scan's error) that were not there before.
func (h *Sandbox) created(before map[string]bool, masks, ro []string, err error) []sandbox.Violation {
	if err != nil {
		return []sandbox.Violation{{Kind: sandbox.ViolationProtectedCreated, Subject: h.root,
			Detail: "the workspace could not be scanned for protected paths after the run: " + err.Error()}}
	}
	var out []sandbox.Violation
	for _, p := range append(masks, ro...) {
		if before[p] {
			continue
		}
		out = append(out, sandbox.Violation{Kind: sandbox.ViolationProtectedCreated, Subject: p,
			Detail: "the command created a protected path; programs that run later (git, shells, editors, agents) may read it"})
	}
	return out
}

// Probe reports whether every required layer can be set up on this host,
// by starting a launcher through all of them (kept for the next Run;
// with Limits, a child that stops where it would execute a command). A
// nil error means Run will not fail with [sandbox.ErrUnavailable] for
// lack of a layer.
func (h *Sandbox) Probe(ctx context.Context) error {
	_, err := h.run(ctx, sandbox.Command{Args: []string{"probe"}}, true)
	return err
}

// Run runs cmd inside the sandbox. It implements [sandbox.Sandbox].
func (h *Sandbox) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	return h.run(ctx, cmd, false)
}

// readOnlyEntries returns what the sandbox needs to show p read-only: p
// itself when it is a symlink (recreated as a link) and its real path
// (bound). A path that does not exist yields nothing.
func readOnlyEntries(p string) []string {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return []string{p, real}
	}
	return []string{real}
}

// Close ends the sandbox's launchers (see the package documentation):
// the processes that start its commands, idle between runs. A run in
// progress finishes, and its launcher ends after it. Close is safe to
// call more than once; a Run after Close still works, with a launcher
// that ends with the run. A Sandbox that is garbage collected without
// Close ends its launchers too, and they all die with this process.
func (h *Sandbox) Close() error {
	h.pool.close()
	return nil
}
