package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Options configure a Gate. A nil *Options, and every zero field, means the documented default.
// New copies the options; later changes to them have no effect.
type Options struct {
	// Workspace lists the workspace roots. Targets inside them are "inside"; relative targets are
	// relative to the first. Default: the current working directory. Each root must exist.
	Workspace []string
	// ConfigDir is the user configuration directory reins profiles are loaded from. The gate
	// always protects it, whatever the profile says, so an agent cannot edit its own
	// permissions. Default: os.UserConfigDir()/reins (if the user configuration directory is
	// unknown, none).
	ConfigDir string
	// Profiles are named profiles, besides the built-in ones, that Alternatives may propose (and
	// a run may switch to): profiles loaded from files, say. A name here shadows a built-in
	// profile of the same name.
	Profiles []profile.Profile
}

// Gate decides whether an agent may take an action: ALLOW, DENY or CONFIRM, with obligations.
// It is the compiled form of one profile over one workspace, immutable after New and safe for
// concurrent use. Deciding is a pure function of the gate, a snapshot of the run's state
// ([State]) and the action: the gate holds no run state, writes no record and starts no
// goroutine, so a Gate needs no Close. The run that owns the state (package reins) takes the
// snapshot, records the decision and latches what the decision says to latch.
type Gate struct {
	env *env
	st  *state
}

// env is what every gate of one run shares, whichever profile it compiles: the workspace
// configuration and the caches that do not depend on the profile.
type env struct {
	opts   Options
	roots  []string
	config string
	home   string
	tmp    string
	repos  repoTrust // per-directory answers of repository trust for git (repotrust.go)
	alts   sync.Map  // profile name -> *state, for Alternatives
}

// state is everything a decision needs from the profile, derived once.
type state struct {
	prof       *profile.Compiled
	name       string
	band       policy.Band
	mode       profile.Mode
	rules      *policy.RuleSet
	external   profile.ExternalWrites
	execCkpt   bool // checkpoint exec parts (profile.ExecCheckpointsOn)
	ws         *workspace
	prot       *protector
	registries map[string][]string
	hash       string // the profile's content hash, for audit records
	limits     profile.Limits
	lists      fspath.Lists // the two protection classes as enforced (Protections)
	shellCache analysisCache
}

// New returns a gate enforcing profile p (validated and compiled here) with the given options.
func New(p profile.Profile, opts *Options) (*Gate, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Profiles = append([]profile.Profile(nil), o.Profiles...)
	e := &env{opts: o}
	e.roots = append([]string(nil), o.Workspace...)
	if len(e.roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("gate: no workspace given and no working directory: %w", err)
		}
		e.roots = []string{wd}
	}
	e.home, _ = os.UserHomeDir()
	e.tmp = os.TempDir()
	e.config = o.ConfigDir
	if e.config == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			e.config = filepath.Join(dir, "reins")
		}
	}
	st, err := e.compile(p)
	if err != nil {
		return nil, err
	}
	return &Gate{env: e, st: st}, nil
}

// With returns a gate for profile p over the same workspace, configuration directory and
// profile list, sharing g's caches that do not depend on the profile. A run switches profile
// with it.
func (g *Gate) With(p profile.Profile) (*Gate, error) {
	st, err := g.env.compile(p)
	if err != nil {
		return nil, err
	}
	return &Gate{env: g.env, st: st}, nil
}

func (e *env) compile(p profile.Profile) (*state, error) {
	c, err := p.Compile()
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	ws, err := newWorkspace(e.roots, c.TrustedPaths(), e.home)
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	// The profile's two classes, the seeds' six names whatever the profile says, and the user
	// configuration directory, so an agent cannot edit its own permissions.
	lists := fspath.Lists{ReadWrite: c.ProtectedPaths(), Write: c.WriteProtectedPaths()}.WithSeeds()
	if e.config != "" {
		abs, err := filepath.Abs(e.config)
		if err != nil {
			return nil, fmt.Errorf("gate: config directory %q: %w", e.config, err)
		}
		lists.Write = append(lists.Write, filepath.ToSlash(abs))
	}
	prot, err := newProtector(lists, e.home, ws.fs.Roots())
	if err != nil {
		return nil, fmt.Errorf("gate: profile %q: %w", c.Name(), err)
	}
	return &state{prof: c, name: c.Name(), band: c.Band(), mode: c.Mode(), rules: c.Rules(),
		external: c.ExternalWrites(), ws: ws, prot: prot, registries: c.Registries(), hash: c.Profile().Hash(),
		limits: c.Limits(), execCkpt: c.ExecCheckpoints() == profile.ExecCheckpointsOn, lists: shared(lists, c.ProtectedPaths())}, nil
}

// shared returns the protection lists the other layers apply: the gate's, except that the
// seeds' .git, which the gate denies to direct reads, is write-protected there unless the
// profile itself lists it as a secret: git inside a sandbox must read its repository, and a
// checkpoint leaves out both classes anyway.
func shared(l fspath.Lists, profileSecrets []string) fspath.Lists {
	if slices.ContainsFunc(profileSecrets, func(e string) bool { return strings.EqualFold(e, ".git") }) {
		return l
	}
	out := fspath.Lists{Write: slices.Clone(l.Write)}
	for _, e := range l.ReadWrite {
		if strings.EqualFold(e, ".git") {
			if !slices.ContainsFunc(out.Write, func(x string) bool { return strings.EqualFold(x, ".git") }) {
				out.Write = append(out.Write, e)
			}
			continue
		}
		out.ReadWrite = append(out.ReadWrite, e)
	}
	return out
}

// Protections returns the two protection classes this gate enforces, as the other layers apply
// them: the profile's lists, the seeds' names whatever the profile says, and the user
// configuration directory (write-protected). It is the one list a host hands to every other
// layer, so they protect what the gate does: the checkpointer (checkpoint.Options.Protected,
// whose Protection has the same two fields) never stores either class, and the sandbox
// (sandbox.FsNetPolicy.DeniedPaths, both classes) masks the secrets and keeps the
// write-protected paths read-only. The seeds' .git, which the gate denies to direct reads, is
// in the write-protected class here (git inside the sandbox reads its repository), unless the
// profile lists it as a secret. It returns new slices.
func (g *Gate) Protections() (readWrite, write []string) {
	return slices.Clone(g.st.lists.ReadWrite), slices.Clone(g.st.lists.Write)
}

// Profile returns the gate's compiled profile.
func (g *Gate) Profile() *profile.Compiled { return g.st.prof }

// Decide decides whether action a may happen, given the run state s (nil means the zero
// State: nothing latched, no budget exhausted, no grants). It walks the decision order: halted,
// hard stops, protected paths, permission mode, the profile's rules (and the state's standing
// grants for what they would CONFIRM), the autonomy matrix; the first layer that decides wins,
// and a compound action takes the strictest outcome of its parts.
//
// Decide records nothing and changes nothing: a hard stop it finds is a Deny whose Latch names
// the cause, for the run to latch. The decision's ids are the run's to fill. When tr is not nil
// it collects the trace of this decision, from which [Trace.Explanation] reads the whole
// explanation without deciding again. With a nil tr and an allowed action, Decide allocates
// nothing.
func (g *Gate) Decide(s *State, a policy.Action, tr *Trace) Decision {
	if s == nil {
		s = &zeroState
	}
	return g.decide(g.st, s, &a, tr)
}

var zeroState State
