package remote

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// DaytonaConfig configures [NewDaytona].
type DaytonaConfig struct {
	// Sandbox is the ID or name of a running Daytona sandbox. Required.
	// The host creates it, with its image, resources and network
	// settings (daytona create --snapshot ... --cpu ... --memory ...
	// --network-block-all), and puts the workspace into it.
	Sandbox string
	// RemoteDir is the working root inside the sandbox, absolute.
	// Required.
	RemoteDir string
	// Policy: DeniedPaths are checked in the arguments and the working
	// directory (as written here, with links followed in the sandbox);
	// EnvAllowlist, when not empty, clears the sandbox environment of the
	// command and keeps the listed variables. AllowedPaths and
	// AllowNetwork are not enforced by this backend: daytona exec has no
	// such switches, the sandbox's creation settings decide.
	Policy sandbox.FsNetPolicy
	// Shell runs the script in the sandbox; empty means "bash".
	Shell string
	// CLI is the daytona binary; empty means "daytona" from PATH.
	CLI string
}

// Daytona runs commands in an existing Daytona sandbox with "daytona
// exec". See the package documentation for what it enforces.
type Daytona struct {
	cfg    DaytonaConfig
	root   string
	match  pathmatch.Matcher
	denied []string
}

var _ sandbox.Sandbox = (*Daytona)(nil)

// NewDaytona validates cfg and returns the daytona backend.
func NewDaytona(cfg DaytonaConfig) (*Daytona, error) {
	if cfg.Sandbox == "" || strings.HasPrefix(cfg.Sandbox, "-") || strings.ContainsAny(cfg.Sandbox, " \t\n") {
		return nil, fmt.Errorf("sandbox: DaytonaConfig.Sandbox %q is not a sandbox ID or name", cfg.Sandbox)
	}
	root, err := vendorDir("DaytonaConfig.RemoteDir", cfg.RemoteDir, "")
	if err != nil {
		return nil, err
	}
	if cfg.Shell == "" {
		cfg.Shell = "bash"
	}
	if err := checkShell("DaytonaConfig.Shell", cfg.Shell); err != nil {
		return nil, err
	}
	m, denied, err := remoteDenied(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	d := &Daytona{cfg: cfg, root: root, match: m, denied: denied}
	d.cfg.Policy.EnvAllowlist = append([]string(nil), cfg.Policy.EnvAllowlist...)
	return d, nil
}

// daytonaNoConfine says why daytona does not enforce a Confine.
const daytonaNoConfine = "a daytona sandbox keeps the network and the files it was created with, for every command"

// EnforcesConfine reports false: daytona exec runs in an existing
// sandbox whose network and files are set when it is created, so daytona
// refuses a command with Confine set.
func (d *Daytona) EnforcesConfine() bool { return false }

// Root returns the working root inside the sandbox.
func (d *Daytona) Root() string { return d.root }

// Probe reports whether the daytona CLI is installed and logged in.
func (d *Daytona) Probe(ctx context.Context) error {
	if _, uerr := d.preflight(); uerr != nil {
		return uerr
	}
	return nil
}

func (d *Daytona) preflight() (string, *sandbox.UnavailableError) {
	cli, uerr := backend.FindCLI("daytona", d.cfg.CLI, "daytona", "install the Daytona CLI, or set DaytonaConfig.CLI")
	if uerr != nil {
		return "", uerr
	}
	if os.Getenv("DAYTONA_API_KEY") != "" {
		return cli, nil
	}
	// The CLI keeps its login in DAYTONA_CONFIG_DIR or the user's
	// configuration directory, in config.json.
	dir := os.Getenv("DAYTONA_CONFIG_DIR")
	if dir == "" {
		if c, err := os.UserConfigDir(); err == nil {
			dir = filepath.Join(c, "daytona")
		}
	}
	if dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "config.json")); err == nil && fi.Mode().IsRegular() {
			return cli, nil
		}
	}
	return "", &sandbox.UnavailableError{Backend: "daytona", Reason: "the daytona CLI is not authenticated: run \"daytona login\" or set DAYTONA_API_KEY (no config.json in the Daytona configuration directory)"}
}

// execArgs builds the "daytona exec" argument vector (argv[0]
// included). The script travels base64-encoded: daytona exec joins the
// arguments into one command line that the sandbox's daemon splits again
// with its own quoting rules, and a base64 string in double quotes inside
// single quotes survives every such rule seen (daytona's
// apps/cli/cmd/sandbox/exec.go and its daemon's parseCommand).
func (d *Daytona) execArgs(cli, script string, cmd sandbox.Command) []string {
	enc := base64.StdEncoding.EncodeToString([]byte(script))
	return []string{cli, "exec", d.cfg.Sandbox, "--timeout", backend.Seconds(backend.Timeout(cmd)), "--",
		d.cfg.Shell, "-c", `eval "$(printf %s ` + enc + ` | base64 -d)"`}
}

// Run runs cmd in the sandbox. It implements [sandbox.Sandbox].
func (d *Daytona) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	// daytona exec returns stdout and stderr as one stream: the script
	// keeps them apart in files and prints them base64-encoded.
	return runVendor(ctx, vendorRun{
		conf: sandbox.Confinement{Backend: "daytona"}, cmd: cmd, root: d.root, match: d.match, denied: d.denied,
		allow: d.cfg.Policy.EnvAllowlist, files: true, watchdog: true, layers: []sandbox.Layer{sandbox.LayerContainer},
		noConfine: daytonaNoConfine,
		preflight: d.preflight,
		argv:      func(cli, script string) []string { return d.execArgs(cli, script, cmd) },
		describe:  "daytona exec " + d.cfg.Sandbox,
	})
}
