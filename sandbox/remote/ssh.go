package remote

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/argcheck"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// SSHConfig configures [NewSSH].
type SSHConfig struct {
	// Host is the remote host: a name from the ssh configuration or an
	// address. Required; it must not start with "-" or contain "@" (set
	// User instead).
	Host string
	// Port is the remote port; zero means ssh's default.
	Port int
	// User is the remote user; empty means ssh's default.
	User string
	// IdentityFile is the private key (-i, with IdentitiesOnly=yes);
	// empty means ssh's default keys and agent.
	IdentityFile string
	// KnownHostsFile, when set, is the only known-hosts file, and the
	// host key must already be in it (StrictHostKeyChecking=yes). Empty
	// means ssh's configuration decides.
	KnownHostsFile string
	// Options are extra ssh options, each "Name=value" as for -o.
	Options []string
	// RemoteDir is the working root on the remote host, absolute.
	// Required. Command.Dir is resolved below it, and checked there with
	// links followed.
	RemoteDir string
	// Policy: DeniedPaths are checked in the arguments and the working
	// directory (see the package documentation); EnvAllowlist, when not
	// empty, clears the remote environment and keeps only the listed
	// variables (the remote values, overridden by Command.Env). Without
	// an allowlist the remote session's environment is kept and
	// Command.Env added. AllowedPaths and AllowNetwork are not enforced:
	// the remote host is not confined.
	Policy sandbox.FsNetPolicy
	// Shell, when set (for example "bash"), runs the script with that
	// shell on the remote host instead of the login shell. The script
	// needs bash-compatible quoting ($'...') when an argument has control
	// characters or invalid UTF-8; set Shell when the login shell is a
	// plain POSIX sh such as dash.
	Shell string
	// ConnectTimeout bounds connecting and authenticating; zero means
	// 10 seconds.
	ConnectTimeout time.Duration
	// CLI is the ssh client; empty means "ssh" from PATH.
	CLI string
}

// SSH runs commands on a remote host with the OpenSSH client. See the
// package documentation for what it enforces.
type SSH struct {
	cfg    SSHConfig
	root   string
	match  pathmatch.Matcher
	denied []string
}

var _ sandbox.Sandbox = (*SSH)(nil)

// NewSSH validates cfg and returns the ssh backend. It does not connect;
// [SSH.Probe] does.
func NewSSH(cfg SSHConfig) (*SSH, error) {
	if cfg.Host == "" || strings.HasPrefix(cfg.Host, "-") || strings.ContainsAny(cfg.Host, "@ \t\n") {
		return nil, fmt.Errorf("sandbox: SSHConfig.Host %q is not a host name", cfg.Host)
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("sandbox: SSHConfig.Port %d is out of range", cfg.Port)
	}
	if strings.HasPrefix(cfg.User, "-") || strings.ContainsAny(cfg.User, "@ \t\n") {
		return nil, fmt.Errorf("sandbox: SSHConfig.User %q is not a user name", cfg.User)
	}
	for i, o := range cfg.Options {
		if strings.HasPrefix(o, "-") || !strings.ContainsAny(o, "= ") || strings.ContainsAny(o, "\n\x00") {
			return nil, fmt.Errorf("sandbox: SSHConfig.Options[%d] %q is not Name=value", i, o)
		}
	}
	if !path.IsAbs(cfg.RemoteDir) {
		return nil, fmt.Errorf("sandbox: SSHConfig.RemoteDir %q is not absolute", cfg.RemoteDir)
	}
	if err := checkShell("SSHConfig.Shell", cfg.Shell); err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout < 0 {
		return nil, fmt.Errorf("sandbox: SSHConfig.ConnectTimeout is negative")
	}
	m, denied, err := remoteDenied(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	s := &SSH{cfg: cfg, root: path.Clean(cfg.RemoteDir), match: m, denied: denied}
	s.cfg.Options = append([]string(nil), cfg.Options...)
	s.cfg.Policy.EnvAllowlist = append([]string(nil), cfg.Policy.EnvAllowlist...)
	return s, nil
}

// sshNoConfine says why ssh does not enforce a Confine.
const sshNoConfine = "the remote host's files and network are its own, and ssh confines neither"

// EnforcesConfine reports false: ssh confines neither the remote host's
// files nor its network, and refuses a command with Confine set.
func (s *SSH) EnforcesConfine() bool { return false }

// Root returns the remote working root.
func (s *SSH) Root() string { return s.root }

// sshArgs returns the ssh argument vector (argv[0] included) that runs
// remoteCommand on the host.
func (s *SSH) sshArgs(cli, remoteCommand string) []string {
	ct := s.cfg.ConnectTimeout
	if ct == 0 {
		ct = 10 * time.Second
	}
	args := []string{cli,
		"-o", "BatchMode=yes",
		"-o", "ConnectTimeout=" + backend.Seconds(ct),
		"-o", "ServerAliveInterval=15",
		"-o", "ServerAliveCountMax=3",
		"-o", "LogLevel=ERROR",
		"-T", "-e", "none",
	}
	if s.cfg.KnownHostsFile != "" {
		args = append(args, "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile="+s.cfg.KnownHostsFile, "-o", "GlobalKnownHostsFile=/dev/null")
	}
	if s.cfg.IdentityFile != "" {
		args = append(args, "-i", s.cfg.IdentityFile, "-o", "IdentitiesOnly=yes")
	}
	if s.cfg.Port != 0 {
		args = append(args, "-p", strconv.Itoa(s.cfg.Port))
	}
	if s.cfg.User != "" {
		args = append(args, "-l", s.cfg.User)
	}
	for _, o := range s.cfg.Options {
		args = append(args, "-o", o)
	}
	return append(args, "--", s.cfg.Host, remoteCommand)
}

// wrap makes the remote command line out of a script: the script itself
// for the login shell, or "exec SHELL -c '<script>'".
func (s *SSH) wrap(script string) string {
	if s.cfg.Shell == "" {
		return script
	}
	return "exec " + s.cfg.Shell + " -c '" + strings.ReplaceAll(script, "'", `'\''`) + "'"
}

func (s *SSH) describe() string {
	h := s.cfg.Host
	if s.cfg.User != "" {
		h = s.cfg.User + "@" + h
	}
	if s.cfg.Port != 0 {
		h += ":" + strconv.Itoa(s.cfg.Port)
	}
	return "ssh to " + h
}

// Probe connects to the host and checks that the remote root exists. Its
// errors match [sandbox.ErrUnavailable] and carry ssh's message.
func (s *SSH) Probe(ctx context.Context) error {
	cli, uerr := backend.FindCLI("ssh", s.cfg.CLI, "ssh", "install openssh-client, or set SSHConfig.CLI")
	if uerr != nil {
		return uerr
	}
	q, err := quoteArg(s.root)
	if err != nil {
		return &sandbox.UnavailableError{Backend: "ssh", Reason: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, backend.PreflightTimeout)
	defer cancel()
	argv := s.sshArgs(cli, s.wrap("cd "+q+" && echo reins-ok"))
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Env = envlist.Host()
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil || !strings.Contains(out.String(), "reins-ok") {
		msg := backend.LastLines(errOut.Bytes(), 3)
		if msg == "" && err != nil {
			msg = err.Error()
		}
		return &sandbox.UnavailableError{Backend: "ssh", Reason: fmt.Sprintf("%s failed or %s is missing there: %s", s.describe(), s.root, msg)}
	}
	return nil
}

// Run runs cmd on the remote host. It implements [sandbox.Sandbox].
func (s *SSH) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	conf := sandbox.Confinement{Backend: "ssh"}
	if err := cmd.Validate(); err != nil {
		return backend.Invalid(conf, err)
	}
	if cmd.Confine != nil {
		return backend.RefuseConfine(conf, sshNoConfine)
	}
	dir, vs := lexicalWorkdir(s.root, s.match, cmd.Dir)
	if len(vs) > 0 {
		return backend.Denied(conf, vs)
	}
	if vs := backend.Violations(argcheck.Lexical(s.match, dir, cmd.Args, remoteScripts)); len(vs) > 0 {
		return backend.Denied(conf, vs)
	}
	cli, uerr := backend.FindCLI("ssh", s.cfg.CLI, "ssh", "install openssh-client, or set SSHConfig.CLI")
	if uerr != nil {
		return backend.Unavailable(conf, uerr)
	}
	nonce, err := newNonce()
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: "ssh", Reason: err.Error()})
	}
	clear, keep, set := remoteEnv(s.cfg.Policy.EnvAllowlist, cmd.Env)
	script, err := remoteScript{
		nonce: nonce, root: s.root, dir: dir, denied: s.denied,
		clearEnv: clear, keep: keep, set: set, args: cmd.Args, handshake: true,
	}.build()
	if err != nil {
		return backend.Invalid(conf, fmt.Errorf("%w: %v", sandbox.ErrInvalidCommand, err))
	}
	conf.Enforced = []sandbox.Layer{sandbox.LayerWorkdir, sandbox.LayerArgs, sandbox.LayerRemoteHost}
	if clear {
		conf.Enforced = append(conf.Enforced, sandbox.LayerEnv)
	}
	run := scriptRun{
		conf: conf, cli: s.describe(), path: cli, argv: s.sshArgs(cli, s.wrap(script)),
		env: envlist.Host(), stdin: cmd.Stdin, timeout: backend.Timeout(cmd), maxOutput: backend.MaxOutput(cmd),
		nonce: nonce, dir: cmd.Dir, handshake: true,
		beforeKill: func(stderr *frame) { s.killRemote(cli, stderr) },
	}
	return run.run(ctx)
}

// killRemote kills the remote command's process group (the script's
// shell leads it: sshd starts each session with setsid) through a
// second connection, if the script has said its process id. If it has
// not, the command has not started and never will: the script waits for
// a go line that is only sent with the process id in hand.
func (s *SSH) killRemote(cli string, stderr *frame) {
	pid, ok := stderr.startArgNow()
	if !ok {
		return
	}
	if n, err := strconv.Atoi(pid); err != nil || n <= 1 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), backend.CleanupTimeout)
	defer cancel()
	argv := s.sshArgs(cli, "kill -9 -"+pid+" 2>/dev/null; true")
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Env = envlist.Host()
	_ = c.Run()
}
