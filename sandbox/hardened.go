package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
)

// HardenedConfig configures [NewHardened]. A zero value with Root set is
// the strict default: workspace writable, network denied, every layer
// required.
type HardenedConfig struct {
	// Root is the workspace, writable inside the sandbox. Required.
	Root string
	// Policy adds writable paths, denied paths, the network switch and
	// the env allowlist (empty means [DefaultEnvAllowlist]).
	Policy FsNetPolicy
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
	// SimulateMissing makes the listed layers behave as if the host
	// lacked them. It exists to test a host's handling of a degraded or
	// refusing sandbox; production code leaves it empty.
	SimulateMissing []Layer
}

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

// Hardened runs commands in the local-hardened sandbox. See the package
// documentation for what it enforces.
type Hardened struct {
	cfg      HardenedConfig
	root     string
	writable []string // root first, then AllowedPaths, resolved
	readOnly []string
	match    pathMatcher
	envAllow []string
	// noUserNS latches once creating a user namespace failed, so later
	// runs do not pay for the failed attempt.
	noUserNS atomic.Bool
}

var _ Sandbox = (*Hardened)(nil)

// NewHardened validates cfg and returns the hardened backend. It does not
// probe the kernel; [Hardened.Probe] does, and Run refuses to run (exit
// code 127) when a required layer is missing.
func NewHardened(cfg HardenedConfig) (*Hardened, error) {
	root, err := resolveRoot(cfg.Root, "HardenedConfig.Root")
	if err != nil {
		return nil, err
	}
	m, err := newPathMatcher(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	h := &Hardened{cfg: cfg, root: root, match: m}
	h.cfg.Policy.AllowedPaths = append([]string(nil), cfg.Policy.AllowedPaths...)
	h.cfg.Policy.DeniedPaths = append([]string(nil), cfg.Policy.DeniedPaths...)
	h.cfg.SimulateMissing = append([]Layer(nil), cfg.SimulateMissing...)
	h.writable = []string{root}
	for i, p := range cfg.Policy.AllowedPaths {
		r, err := resolveRoot(p, fmt.Sprintf("HardenedConfig.Policy.AllowedPaths[%d]", i))
		if err != nil {
			return nil, err
		}
		if r == "/" {
			return nil, fmt.Errorf("sandbox: HardenedConfig.Policy.AllowedPaths[%d] is the file-system root", i)
		}
		h.writable = append(h.writable, r)
	}
	if root == "/" {
		return nil, fmt.Errorf("sandbox: HardenedConfig.Root is the file-system root")
	}
	ro := cfg.ReadOnlyPaths
	if ro == nil {
		ro = DefaultReadOnlyPaths()
	}
	for i, p := range ro {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: HardenedConfig.ReadOnlyPaths[%d] %q is not absolute", i, p)
		}
		if filepath.Clean(p) == "/" {
			return nil, fmt.Errorf("sandbox: HardenedConfig.ReadOnlyPaths[%d] is the file-system root", i)
		}
		h.readOnly = append(h.readOnly, readOnlyEntries(filepath.Clean(p))...)
	}
	if cfg.MinLandlockABI < 0 {
		return nil, fmt.Errorf("sandbox: HardenedConfig.MinLandlockABI %d is negative", cfg.MinLandlockABI)
	}
	h.envAllow = cfg.Policy.EnvAllowlist
	if len(h.envAllow) == 0 {
		h.envAllow = DefaultEnvAllowlist()
	}
	for _, l := range cfg.SimulateMissing {
		if !knownLayer(l) {
			return nil, fmt.Errorf("sandbox: HardenedConfig.SimulateMissing: unknown layer %q", l)
		}
	}
	return h, nil
}

func knownLayer(l Layer) bool {
	switch l {
	case LayerUserNS, LayerMountNS, LayerPIDNS, LayerNetNS, LayerCaps, LayerNoNewPrivs,
		LayerLandlock, LayerSeccomp, LayerRlimits, LayerFDs:
		return true
	}
	return false
}

// Root returns the resolved workspace root.
func (h *Hardened) Root() string { return h.root }

func (h *Hardened) simulated(l Layer) bool {
	for _, s := range h.cfg.SimulateMissing {
		if s == l {
			return true
		}
	}
	return false
}

func (h *Hardened) minABI() int {
	if h.cfg.MinLandlockABI == 0 {
		return DefaultMinLandlockABI
	}
	return h.cfg.MinLandlockABI
}

// protectedPaths walks the writable directories and returns, resolved,
// the existing paths that match a denied entry: masks to hide and .git
// entries to keep read-only. Absolute denied entries that exist are
// masks too. It does not descend into a matched directory.
func (h *Hardened) protectedPaths() (masks, readOnly []string, err error) {
	return findProtected(h.match, h.writable)
}

// findProtected walks dirs and returns, resolved, the existing paths
// that match a denied entry of m: masks to hide and .git entries to keep
// read-only. Absolute denied entries that exist are masks too. It does
// not descend into a matched directory.
func findProtected(m pathMatcher, dirs []string) (masks, readOnly []string, err error) {
	seen := map[string]bool{}
	add := func(p string, ro bool) error {
		r, err := resolvePath(p, nil)
		if err != nil {
			return err
		}
		if seen[r] {
			return nil
		}
		if _, err := os.Stat(r); err != nil {
			return nil // dangling: nothing to hide
		}
		seen[r] = true
		if ro {
			readOnly = append(readOnly, r)
		} else {
			masks = append(masks, r)
		}
		return nil
	}
	for _, w := range dirs {
		err := filepath.WalkDir(w, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("sandbox: scanning %s for denied paths: %w", w, err)
			}
			if p == w {
				return nil
			}
			entry, ok := m.match(p)
			if !ok {
				return nil
			}
			// Only act on the component that completes the match.
			if parentEntry, parentOK := m.match(filepath.Dir(p)); parentOK && parentEntry == entry {
				return filepath.SkipDir
			}
			if err := add(p, isGitEntry(entry)); err != nil {
				return err
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	for _, e := range m.abs {
		p := string(filepath.Separator) + filepath.Join(e...)
		if _, err := os.Lstat(p); err == nil {
			if err := add(p, false); err != nil {
				return nil, nil, err
			}
		}
	}
	sort.Strings(masks)
	sort.Strings(readOnly)
	return masks, readOnly, nil
}

// isGitEntry reports whether a denied entry is a .git entry, which the
// hardened backend keeps readable but read-only instead of masking.
func isGitEntry(entry string) bool {
	return strings.EqualFold(filepath.Base(entry), ".git")
}

// Probe reports whether every required layer can be set up on this host,
// by running the sandbox child through all of them up to the point where
// it would execute a command. A nil error means Run will not fail with
// [ErrUnavailable] for lack of a layer.
func (h *Hardened) Probe(ctx context.Context) error {
	_, err := h.run(ctx, Command{Args: []string{"probe"}}, true)
	return err
}

// Run runs cmd inside the sandbox. It implements [Sandbox].
func (h *Hardened) Run(ctx context.Context, cmd Command) (Result, error) {
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
