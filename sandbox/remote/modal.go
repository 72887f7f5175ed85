package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// ModalConfig configures [NewModal].
type ModalConfig struct {
	// Root is the workspace on this host. Required. Each run stages a
	// copy without the denied paths (hard links where possible) and
	// modal shell --add-local uploads it to /mnt/<base name of Root>,
	// the command's working root: what the command writes there does
	// not come back to this host.
	Root string
	// Image is the registry image of the container (--image), pinned by
	// digest preferably; empty means Modal's default image.
	Image string
	// AddPython adds a Python version to the image (--add-python).
	AddPython string
	// CPU, MemoryMiB and GPU request resources (--cpu, --memory in MiB,
	// --gpu); zero or empty means Modal's defaults.
	CPU       int
	MemoryMiB int
	GPU       string
	// Cloud and Region choose where it runs (--cloud, --region).
	Cloud, Region string
	// Secrets and Volumes name Modal secrets and volumes to attach
	// (--secret, --volume at /mnt/<name>).
	Secrets, Volumes []string
	// Environment is the Modal environment (-e); empty means the
	// profile's default.
	Environment string
	// Policy: DeniedPaths are checked in the arguments and the working
	// directory; EnvAllowlist is applied in the container (empty means
	// [sandbox.DefaultEnvAllowlist], because modal shell puts the caller's Modal
	// token into the container's environment). AllowedPaths and
	// AllowNetwork are not enforced: modal shell has no network switch.
	Policy sandbox.FsNetPolicy
	// CLI is the modal binary; empty means "modal" from PATH.
	CLI string
}

// Modal runs each command in a new Modal container with "modal shell".
// See the package documentation for what it enforces.
type Modal struct {
	cfg    ModalConfig
	root   string
	remote string
	match  pathmatch.Matcher
	denied []string
}

var _ sandbox.Sandbox = (*Modal)(nil)

// NewModal validates cfg and returns the modal backend.
func NewModal(cfg ModalConfig) (*Modal, error) {
	root, err := pathmatch.ResolveRoot(cfg.Root, "ModalConfig.Root")
	if err != nil {
		return nil, err
	}
	for name, v := range map[string]string{"Image": cfg.Image, "AddPython": cfg.AddPython, "GPU": cfg.GPU, "Cloud": cfg.Cloud, "Region": cfg.Region, "Environment": cfg.Environment} {
		if strings.HasPrefix(v, "-") {
			return nil, fmt.Errorf("sandbox: ModalConfig.%s %q must not start with '-'", name, v)
		}
	}
	for _, v := range append(append([]string(nil), cfg.Secrets...), cfg.Volumes...) {
		if v == "" || strings.HasPrefix(v, "-") {
			return nil, fmt.Errorf("sandbox: ModalConfig: secret or volume name %q is not a name", v)
		}
	}
	if cfg.CPU < 0 || cfg.MemoryMiB < 0 {
		return nil, fmt.Errorf("sandbox: ModalConfig: negative resource request")
	}
	m, denied, err := remoteDenied(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	mo := &Modal{cfg: cfg, root: root, remote: "/mnt/" + filepath.Base(root), match: m, denied: denied}
	mo.cfg.Policy.EnvAllowlist = append([]string(nil), cfg.Policy.EnvAllowlist...)
	if len(mo.cfg.Policy.EnvAllowlist) == 0 {
		mo.cfg.Policy.EnvAllowlist = sandbox.DefaultEnvAllowlist()
	}
	return mo, nil
}

// modalNoConfine says why modal does not enforce a Confine.
const modalNoConfine = "modal shell has no network switch"

// EnforcesConfine reports false: modal shell cannot cut the command off
// from the network, so modal refuses a command with Confine set.
func (mo *Modal) EnforcesConfine() bool { return false }

// Root returns the workspace root on this host.
func (mo *Modal) Root() string { return mo.root }

// Probe reports whether the modal CLI is installed and has a token.
func (mo *Modal) Probe(ctx context.Context) error {
	_, uerr := mo.preflight()
	if uerr != nil {
		return uerr
	}
	return nil
}

func (mo *Modal) preflight() (string, *sandbox.UnavailableError) {
	cli, uerr := backend.FindCLI("modal", mo.cfg.CLI, "modal", "pip install modal, or set ModalConfig.CLI")
	if uerr != nil {
		return "", uerr
	}
	if os.Getenv("MODAL_TOKEN_ID") != "" && os.Getenv("MODAL_TOKEN_SECRET") != "" {
		return cli, nil
	}
	// The client reads its token from MODAL_CONFIG_PATH or ~/.modal.toml.
	cfgPath := os.Getenv("MODAL_CONFIG_PATH")
	if cfgPath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cfgPath = filepath.Join(home, ".modal.toml")
		}
	}
	if cfgPath != "" {
		if fi, err := os.Stat(cfgPath); err == nil && fi.Mode().IsRegular() {
			return cli, nil
		}
	}
	return "", &sandbox.UnavailableError{Backend: "modal", Reason: "the modal CLI is not authenticated: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or run \"modal token new\" (no ~/.modal.toml or MODAL_CONFIG_PATH file)"}
}

// shellArgs builds the "modal shell" argument vector (argv[0] included);
// local is the staged workspace that --add-local uploads.
func (mo *Modal) shellArgs(cli, local, script string) []string {
	args := []string{cli, "shell"}
	if mo.cfg.Environment != "" {
		args = append(args, "--env", mo.cfg.Environment)
	}
	if mo.cfg.Image != "" {
		args = append(args, "--image", mo.cfg.Image)
	}
	if mo.cfg.AddPython != "" {
		args = append(args, "--add-python", mo.cfg.AddPython)
	}
	args = append(args, "--add-local", local)
	for _, v := range mo.cfg.Volumes {
		args = append(args, "--volume", v)
	}
	for _, v := range mo.cfg.Secrets {
		args = append(args, "--secret", v)
	}
	if mo.cfg.CPU > 0 {
		args = append(args, "--cpu", strconv.Itoa(mo.cfg.CPU))
	}
	if mo.cfg.MemoryMiB > 0 {
		args = append(args, "--memory", strconv.Itoa(mo.cfg.MemoryMiB))
	}
	if mo.cfg.GPU != "" {
		args = append(args, "--gpu", mo.cfg.GPU)
	}
	if mo.cfg.Cloud != "" {
		args = append(args, "--cloud", mo.cfg.Cloud)
	}
	if mo.cfg.Region != "" {
		args = append(args, "--region", mo.cfg.Region)
	}
	// modal shell runs shlex.split('/bin/bash -c "' + cmd + '"') (read in
	// modal/cli/shell.py): inside those double quotes only \ and " are
	// special, so escaping them hands bash the script unchanged. Older
	// clients ran --cmd as one program name instead; they cannot run
	// this backend's script and fail without a frame, which is reported,
	// never taken for success.
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(script)
	return append(args, "--cmd", esc)
}

// Run runs cmd in a new Modal container. It implements [sandbox.Sandbox].
func (mo *Modal) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	var staged string
	return runVendor(ctx, vendorRun{
		conf: sandbox.Confinement{Backend: "modal"}, cmd: cmd, root: mo.remote, match: mo.match, denied: mo.denied,
		allow: mo.cfg.Policy.EnvAllowlist, files: true, layers: []sandbox.Layer{sandbox.LayerContainer, sandbox.LayerMasks},
		noConfine: modalNoConfine,
		preflight: mo.preflight,
		prepare: func() (func(), *sandbox.UnavailableError) {
			dir, cleanup, err := stageWorkspace(mo.root, mo.match)
			if err != nil {
				return nil, &sandbox.UnavailableError{Backend: "modal", Layer: sandbox.LayerMasks, Reason: "staging the workspace: " + err.Error()}
			}
			staged = dir
			return cleanup, nil
		},
		argv:     func(cli, script string) []string { return mo.shellArgs(cli, staged, script) },
		describe: "modal shell",
	})
}
