package remote

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// VercelSandboxWorkdir is the default working root of a Vercel sandbox.
const VercelSandboxWorkdir = "/vercel/sandbox"

// VercelSandboxConfig configures [NewVercelSandbox].
type VercelSandboxConfig struct {
	// Runtime, Image and Snapshot choose what the sandbox starts from
	// (--runtime such as "node24", --image, --snapshot); at most one may
	// be set, and none means the CLI's default runtime. A sandbox does
	// not see this host's files: start it from a snapshot that holds the
	// workspace.
	Runtime, Image, Snapshot string
	// VCPUs is --vcpus (each comes with 2 GB of memory); zero means the
	// default.
	VCPUs int
	// Project and Team scope the sandbox (--project, --scope); empty
	// means the CLI infers them from the token.
	Project, Team string
	// Token authenticates the CLI; it is passed as VERCEL_AUTH_TOKEN in
	// the CLI's environment, never in its arguments. Empty means
	// VERCEL_AUTH_TOKEN or VERCEL_OIDC_TOKEN must be set: without a token
	// the CLI would start an interactive login, which this backend never
	// does.
	Token string
	// RemoteDir is the working root inside the sandbox; empty means
	// [VercelSandboxWorkdir].
	RemoteDir string
	// Policy: AllowNetwork chooses --network-policy allow-all or
	// deny-all (enforced by Vercel); DeniedPaths are checked in the
	// arguments and the working directory; EnvAllowlist, when not empty,
	// clears the command's environment in the sandbox and keeps the
	// listed variables. AllowedPaths are not supported.
	Policy sandbox.FsNetPolicy
	// Shell runs the script in the sandbox; empty means "bash".
	Shell string
	// CLI is the Sandbox CLI; empty means "sandbox" from PATH.
	CLI string
}

// VercelSandbox runs each command in a new Vercel sandbox (sandbox run
// --rm). See the package documentation for what it enforces.
type VercelSandbox struct {
	cfg    VercelSandboxConfig
	root   string
	match  pathmatch.Matcher
	denied []string
}

var _ sandbox.Sandbox = (*VercelSandbox)(nil)

// NewVercelSandbox validates cfg and returns the vercel-sandbox backend.
func NewVercelSandbox(cfg VercelSandboxConfig) (*VercelSandbox, error) {
	n := 0
	for name, v := range map[string]string{"Runtime": cfg.Runtime, "Image": cfg.Image, "Snapshot": cfg.Snapshot, "Project": cfg.Project, "Team": cfg.Team} {
		if strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t\n") {
			return nil, fmt.Errorf("sandbox: VercelSandboxConfig.%s %q is not a name", name, v)
		}
		if v != "" && (name == "Runtime" || name == "Image" || name == "Snapshot") {
			n++
		}
	}
	if n > 1 {
		return nil, fmt.Errorf("sandbox: VercelSandboxConfig: set at most one of Runtime, Image and Snapshot")
	}
	if cfg.VCPUs < 0 {
		return nil, fmt.Errorf("sandbox: VercelSandboxConfig.VCPUs is negative")
	}
	if len(cfg.Policy.AllowedPaths) > 0 {
		return nil, fmt.Errorf("sandbox: VercelSandboxConfig.Policy.AllowedPaths: a Vercel sandbox cannot reach this host's paths")
	}
	root, err := vendorDir("VercelSandboxConfig.RemoteDir", cfg.RemoteDir, VercelSandboxWorkdir)
	if err != nil {
		return nil, err
	}
	if cfg.Shell == "" {
		cfg.Shell = "bash"
	}
	if err := checkShell("VercelSandboxConfig.Shell", cfg.Shell); err != nil {
		return nil, err
	}
	m, denied, err := remoteDenied(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	v := &VercelSandbox{cfg: cfg, root: root, match: m, denied: denied}
	v.cfg.Policy.EnvAllowlist = append([]string(nil), cfg.Policy.EnvAllowlist...)
	return v, nil
}

// EnforcesConfine reports true: a Vercel sandbox is made for one
// command and removed after it (sandbox run --rm), so nothing the
// command writes reaches this host or the next command, whatever
// Confine.Writable says, and its network policy follows Confine.Network
// (see [sandbox.Enforcing]).
func (v *VercelSandbox) EnforcesConfine() bool { return true }

// network reports whether cmd may use the network: its Confine decides
// when it has one, the policy otherwise.
func (v *VercelSandbox) network(cmd sandbox.Command) bool {
	if cmd.Confine != nil {
		return cmd.Confine.Network
	}
	return v.cfg.Policy.AllowNetwork
}

// Root returns the working root inside the sandbox.
func (v *VercelSandbox) Root() string { return v.root }

// Probe reports whether the Sandbox CLI is installed and has a token.
func (v *VercelSandbox) Probe(ctx context.Context) error {
	if _, uerr := v.preflight(); uerr != nil {
		return uerr
	}
	return nil
}

func (v *VercelSandbox) preflight() (string, *sandbox.UnavailableError) {
	cli, uerr := backend.FindCLI("vercel-sandbox", v.cfg.CLI, "sandbox", "npm install -g sandbox (the Vercel Sandbox CLI), or set VercelSandboxConfig.CLI")
	if uerr != nil {
		return "", uerr
	}
	if v.cfg.Token == "" && os.Getenv("VERCEL_AUTH_TOKEN") == "" && os.Getenv("VERCEL_OIDC_TOKEN") == "" {
		return "", &sandbox.UnavailableError{Backend: "vercel-sandbox", Reason: "the Vercel Sandbox CLI is not authenticated: set VercelSandboxConfig.Token, VERCEL_AUTH_TOKEN or VERCEL_OIDC_TOKEN (an interactive \"sandbox login\" is never started)"}
	}
	return cli, nil
}

// runArgs builds the "sandbox run" argument vector (argv[0] included).
func (v *VercelSandbox) runArgs(cli, script string, cmd sandbox.Command) []string {
	args := []string{cli, "run", "--rm"}
	switch {
	case v.cfg.Runtime != "":
		args = append(args, "--runtime", v.cfg.Runtime)
	case v.cfg.Image != "":
		args = append(args, "--image", v.cfg.Image)
	case v.cfg.Snapshot != "":
		args = append(args, "--snapshot", v.cfg.Snapshot)
	}
	if v.cfg.VCPUs > 0 {
		args = append(args, "--vcpus", strconv.Itoa(v.cfg.VCPUs))
	}
	// --timeout is the sandbox's lifetime: the command's timeout and a
	// minute to start it.
	args = append(args, "--timeout", backend.Seconds(backend.Timeout(cmd)+time.Minute)+"s")
	if v.network(cmd) {
		args = append(args, "--network-policy", "allow-all")
	} else {
		args = append(args, "--network-policy", "deny-all")
	}
	if v.cfg.Project != "" {
		args = append(args, "--project", v.cfg.Project)
	}
	if v.cfg.Team != "" {
		args = append(args, "--scope", v.cfg.Team)
	}
	// The command follows "--" so that the CLI (cmd-ts) takes none of it
	// for its own options.
	return append(args, "--", v.cfg.Shell, "-c", script)
}

// Run runs cmd in a new sandbox. It implements [sandbox.Sandbox].
func (v *VercelSandbox) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	layers := []sandbox.Layer{sandbox.LayerContainer}
	if !v.network(cmd) {
		layers = append(layers, sandbox.LayerNetworkOff)
	}
	if cmd.Confine != nil {
		layers = append(layers, sandbox.LayerConfine)
	}
	if v.cfg.VCPUs > 0 {
		layers = append(layers, sandbox.LayerResources)
	}
	env := envlist.Host()
	if v.cfg.Token != "" {
		env = append(env, "VERCEL_AUTH_TOKEN="+v.cfg.Token)
	}
	return runVendor(ctx, vendorRun{
		conf: sandbox.Confinement{Backend: "vercel-sandbox"}, cmd: cmd, root: v.root, match: v.match, denied: v.denied,
		allow: v.cfg.Policy.EnvAllowlist, watchdog: true, layers: layers, env: env,
		preflight: v.preflight,
		argv:      func(cli, script string) []string { return v.runArgs(cli, script, cmd) },
		describe:  "sandbox run",
	})
}
