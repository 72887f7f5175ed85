package sandbox

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
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
	// [DefaultEnvAllowlist], because modal shell puts the caller's Modal
	// token into the container's environment). AllowedPaths and
	// AllowNetwork are not enforced: modal shell has no network switch.
	Policy FsNetPolicy
	// CLI is the modal binary; empty means "modal" from PATH.
	CLI string
}

// Modal runs each command in a new Modal container with "modal shell".
// See the package documentation for what it enforces.
type Modal struct {
	cfg    ModalConfig
	root   string
	remote string
	match  pathMatcher
	denied []string
}

var _ Sandbox = (*Modal)(nil)

// NewModal validates cfg and returns the modal backend.
func NewModal(cfg ModalConfig) (*Modal, error) {
	root, err := resolveRoot(cfg.Root, "ModalConfig.Root")
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
		mo.cfg.Policy.EnvAllowlist = DefaultEnvAllowlist()
	}
	return mo, nil
}

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

func (mo *Modal) preflight() (string, *UnavailableError) {
	cli, uerr := findCLI("modal", mo.cfg.CLI, "modal", "pip install modal, or set ModalConfig.CLI")
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
	return "", &UnavailableError{Backend: "modal", Reason: "the modal CLI is not authenticated: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or run \"modal token new\" (no ~/.modal.toml or MODAL_CONFIG_PATH file)"}
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

// Run runs cmd in a new Modal container. It implements [Sandbox].
func (mo *Modal) Run(ctx context.Context, cmd Command) (Result, error) {
	var staged string
	return runVendor(ctx, vendorRun{
		conf: Confinement{Backend: "modal"}, cmd: cmd, root: mo.remote, match: mo.match, denied: mo.denied,
		allow: mo.cfg.Policy.EnvAllowlist, files: true, layers: []Layer{LayerContainer, LayerMasks},
		preflight: mo.preflight,
		prepare: func() (func(), *UnavailableError) {
			dir, cleanup, err := stageWorkspace(mo.root, mo.match)
			if err != nil {
				return nil, &UnavailableError{Backend: "modal", Layer: LayerMasks, Reason: "staging the workspace: " + err.Error()}
			}
			staged = dir
			return cleanup, nil
		},
		argv:     func(cli, script string) []string { return mo.shellArgs(cli, staged, script) },
		describe: "modal shell",
	})
}

// vendorRun is one run of a vendor CLI backend (modal, daytona,
// vercel-sandbox): the shared checks, the script and the framing.
type vendorRun struct {
	conf   Confinement
	cmd    Command
	root   string // the working root on the vendor's side
	match  pathMatcher
	denied []string
	allow  []string
	files  bool
	// layers are enforced beyond the working-directory, argument and env
	// checks.
	layers   []Layer
	watchdog bool
	// env is the CLI's environment; nil means the host's.
	env       []string
	preflight func() (string, *UnavailableError)
	// prepare, if set, runs after the preflight; the function it returns
	// runs when the run is over.
	prepare  func() (func(), *UnavailableError)
	argv     func(cli, script string) []string
	describe string
}

func runVendor(ctx context.Context, v vendorRun) (Result, error) {
	conf, cmd := v.conf, v.cmd
	if err := cmd.validate(); err != nil {
		return Result{ExitCode: ExitDenied, Stderr: []byte(err.Error() + "\n"), Confinement: conf}, err
	}
	if cmd.Stdin != nil {
		return unavailableResult(conf, &UnavailableError{Backend: conf.Backend, Reason: v.describe + " cannot pass standard input to the command; Command.Stdin must be nil"})
	}
	dir, vs := lexicalWorkdir(v.root, v.match, cmd.Dir)
	if len(vs) > 0 {
		return deniedResult(conf, vs)
	}
	if vs := checkArgsLexical(v.match, dir, cmd.Args); len(vs) > 0 {
		return deniedResult(conf, vs)
	}
	cli, uerr := v.preflight()
	if uerr != nil {
		return unavailableResult(conf, uerr)
	}
	if v.prepare != nil {
		cleanup, uerr := v.prepare()
		if uerr != nil {
			return unavailableResult(conf, uerr)
		}
		defer cleanup()
	}
	nonce, err := newNonce()
	if err != nil {
		return unavailableResult(conf, &UnavailableError{Backend: conf.Backend, Reason: err.Error()})
	}
	clear, keep, set := remoteEnv(v.allow, cmd.Env)
	s := remoteScript{
		nonce: nonce, root: v.root, dir: dir, denied: v.denied,
		clearEnv: clear, keep: keep, set: set, args: cmd.Args,
		files: v.files, maxOutput: cmd.maxOutput(),
	}
	if v.watchdog {
		s.watchdog = cmd.timeout()
	}
	script, err := s.build()
	if err != nil {
		return Result{ExitCode: ExitDenied, Stderr: []byte(err.Error() + "\n"), Confinement: conf}, fmt.Errorf("%w: %v", ErrInvalidCommand, err)
	}
	conf.Enforced = append([]Layer{LayerWorkdir, LayerArgs}, v.layers...)
	if clear {
		conf.Enforced = append(conf.Enforced, LayerEnv)
	}
	env := v.env
	if env == nil {
		env = hostEnv()
	}
	return scriptRun{
		conf: conf, cli: v.describe, path: cli, argv: v.argv(cli, script), env: env,
		timeout: cmd.timeout(), maxOutput: cmd.maxOutput(), nonce: nonce, files: v.files, dir: cmd.Dir,
	}.run(ctx)
}

// vendorDir checks a vendor's working root.
func vendorDir(field, dir, def string) (string, error) {
	if dir == "" {
		dir = def
	}
	if !path.IsAbs(dir) {
		return "", fmt.Errorf("sandbox: %s %q is not absolute", field, dir)
	}
	return path.Clean(dir), nil
}
