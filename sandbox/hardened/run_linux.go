//go:build linux

package hardened

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/reins-go/reins/sandbox/internal/argcheck"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/confine"
	"github.com/reins-go/reins/sandbox/internal/envlist"

	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
	"github.com/reins-go/reins/sandbox/internal/proc"
	"github.com/reins-go/reins/sandbox/internal/proto"
)

func (h *Sandbox) run(ctx context.Context, cmd sandbox.Command, probe bool) (sandbox.Result, error) {
	conf := sandbox.Confinement{Backend: backendName}
	if probe {
		pol, uerr := h.policy(nil)
		if uerr != nil {
			return backend.Unavailable(conf, uerr)
		}
		if h.fast() {
			return h.probeFast(ctx, pol)
		}
		return h.runOnce(ctx, cmd, "", pol, true)
	}
	if err := cmd.Validate(); err != nil {
		return sandbox.Result{ExitCode: sandbox.ExitDenied, Stderr: []byte(err.Error() + "\n"), Confinement: conf}, err
	}
	if cmd.Confine != nil && !h.EnforcesConfine() {
		return backend.RefuseConfine(conf, "with Config.BestEffort it may run a command with no confinement at all")
	}
	dir, refusal := pathmatch.Workdir(h.root, h.match, cmd.Dir)
	if refusal != nil {
		return backend.Denied(conf, []sandbox.Violation{{Kind: sandbox.ViolationKind(refusal.Kind), Subject: refusal.Subject, Detail: refusal.Detail}})
	}
	if vs := h.checkArgs(dir, cmd); len(vs) > 0 {
		return backend.Denied(conf, vs)
	}
	pol, uerr := h.policy(cmd.Confine)
	if uerr != nil {
		return backend.Unavailable(conf, uerr)
	}
	var res sandbox.Result
	var err error
	if h.fast() {
		res, err = h.runFast(ctx, cmd, dir, pol)
	} else {
		res, err = h.runOnce(ctx, cmd, dir, pol, false)
	}
	if ctx.Err() != nil && res.ExitCode != 0 {
		// The context ended the run, whatever phase it was in (the
		// set-up of a loaded machine can outlast a short deadline).
		res.TimedOut = true
	}
	return res, err
}

// checkArgs is the seed's argument check: every argument that may name
// a path, and the literal words and paths of an "sh -c" script, are
// checked against the denied paths, .git included, with every symbolic
// link followed. The kernel keeps .git readable for git itself; an
// argument that names it is refused. A script's commands that the
// built-in reader cannot read are not refused: the kernel confines
// them.
func (h *Sandbox) checkArgs(dir string, cmd sandbox.Command) []sandbox.Violation {
	// The command's ~ and $HOME are its private HOME.
	env := envlist.Build([]string{"HOME=" + sandboxHome}, cmd.Env, nil)
	return backend.Violations(argcheck.Host(h.match, dir, cmd.Args, env, argcheck.Scripts{Lenient: true}))
}

// runPolicy is what one run's mount tree, Landlock rules and network
// switch depend on: the protected paths found in the writable roots
// before the run, and what is writable, read-only or pinned, narrowed by
// the command's Confine.
type runPolicy struct {
	// masks and protectedRO are the protected paths found in the
	// writable roots: secrets to hide and write-protected paths (.git,
	// .envrc, ...) to keep read-only.
	masks, protectedRO []string
	// writable are bound writable; readOnly (besides Config's) are the
	// writable roots a Confine made read-only; pins the existing entries
	// of a Confine's create grants.
	writable, readOnly, pins []string
	denyNet, confine         bool
	warnings                 []string
}

// policy scans the writable roots and narrows the sandbox's policy by c
// (nil: none).
func (h *Sandbox) policy(c *sandbox.Confine) (runPolicy, *sandbox.UnavailableError) {
	var pol runPolicy
	var err error
	pol.masks, pol.protectedRO, err = h.protectedPaths()
	if err != nil {
		return pol, &sandbox.UnavailableError{Backend: backendName, Layer: sandbox.LayerMountNS, Reason: err.Error()}
	}
	roots := append(append([]string(nil), h.writable...), h.cacheRW...)
	if c == nil {
		pol.writable, pol.denyNet = roots, !h.cfg.Policy.AllowNetwork
		return pol, nil
	}
	plan, err := confine.Make(*c, roots, h.match)
	if err != nil {
		return pol, &sandbox.UnavailableError{Backend: backendName, Layer: sandbox.LayerConfine, Reason: err.Error()}
	}
	pol.confine, pol.denyNet, pol.warnings = true, !plan.Network, plan.Warnings
	pol.writable = append(append(append([]string(nil), plan.Dirs...), plan.Files...), plan.Create...)
	for _, r := range roots {
		if !slices.Contains(pol.writable, r) {
			pol.readOnly = append(pol.readOnly, r)
		}
	}
	pol.pins = plan.Pins
	return pol, nil
}

// fast reports whether commands go through a launcher (see
// launcher_linux.go). Resource limits are per process, and a launcher
// would share them among its commands: with Limits set, every run gets
// a child of its own.
func (h *Sandbox) fast() bool {
	return h.cfg.Limits == (Limits{}) && !h.perRun
}

// childPolicy is the policy of a child (a launcher, or the child of one
// run) whose host directory is runDir; it creates HOME and TMPDIR there,
// which are the command's when there is no mount namespace. The
// read-only paths are scanned for secrets to mask (see
// readOnlyMasks).
func (h *Sandbox) childPolicy(runDir string, pol runPolicy) (proto.ChildPolicy, error) {
	roMasks, err := h.readOnlyMasks()
	if err != nil {
		return proto.ChildPolicy{}, err
	}
	p := proto.ChildPolicy{
		Dir:            h.root,
		ReadOnly:       append(append([]string(nil), h.readOnly...), pol.readOnly...),
		Writable:       append([]string(nil), pol.writable...),
		Masks:          append(append([]string(nil), pol.masks...), roMasks...),
		GitReadOnly:    pol.protectedRO,
		Pins:           pol.pins,
		Confine:        pol.confine,
		RunDir:         runDir,
		CacheEnv:       h.cacheEnv,
		Home:           filepath.Join(runDir, "home"),
		Tmp:            filepath.Join(runDir, "tmp"),
		DenyNetwork:    pol.denyNet,
		MinLandlockABI: h.minABI(),
		BestEffort:     h.cfg.BestEffort,
		Simulate:       layerStrings(h.cfg.SimulateMissing),
		Limits:         proto.Limits(h.cfg.Limits),
		Env:            envlist.Build(os.Environ(), nil, h.envAllow),
	}
	// A root launcher's command runs as the workspace's owner.
	if os.Geteuid() == 0 && h.ownerUID != 0 {
		p.RunAs, p.RunUID, p.RunGID = true, h.ownerUID, h.ownerGID
	}
	for _, d := range []string{p.Home, filepath.Join(p.Home, ".cache"), p.Tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return p, err
		}
		if p.RunAs {
			_ = os.Lchown(d, p.RunUID, p.RunGID)
		}
	}
	if p.RunAs {
		_ = os.Chmod(runDir, 0o711)
	}
	return p, nil
}

// nsAttr returns the attributes that create the child's namespaces, and
// records them in p. Namespaces are created by clone(2) in the parent: a
// Go program is multi-threaded, and unshare(CLONE_NEWUSER) refuses that.
func (h *Sandbox) nsAttr(p *proto.ChildPolicy, user bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{}
	p.UserNS, p.MountNS, p.PIDNS, p.IPCNS, p.NetNS = user, false, false, false, false
	// The child dies with this process (with the thread that starts it,
	// which the Go runtime never ends while it is not locked).
	attr.Pdeathsig = syscall.SIGKILL
	attr.Setsid = true
	if !user && os.Geteuid() != 0 {
		return attr // without a user namespace only root may create namespaces
	}
	if user {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		if p.RunAs {
			// The owner's ids must exist in the namespace, and the
			// child drops its groups before taking them.
			attr.UidMappings = appendIDMap(attr.UidMappings, p.RunUID)
			attr.GidMappings = appendIDMap(attr.GidMappings, p.RunGID)
			attr.GidMappingsEnableSetgroups = true
		}
		// The uid stays the caller's inside the namespace; a non-zero
		// uid would lose the namespace's capabilities at the exec of
		// the child, so keep the two the child needs as ambient ones.
		// The child drops every capability before the command runs.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	if !h.simulated(sandbox.LayerMountNS) {
		attr.Cloneflags |= syscall.CLONE_NEWNS
		p.MountNS = true
	}
	if !h.simulated(sandbox.LayerPIDNS) {
		attr.Cloneflags |= syscall.CLONE_NEWPID
		p.PIDNS = true
	}
	// An IPC namespace of its own, with or without a pid namespace: the
	// host's System V objects are out of reach.
	if !h.simulated(sandbox.LayerIPCNS) {
		attr.Cloneflags |= syscall.CLONE_NEWIPC
		p.IPCNS = true
	}
	if p.DenyNetwork && !h.simulated(sandbox.LayerNetNS) {
		attr.Cloneflags |= syscall.CLONE_NEWNET
		p.NetNS = true
	}
	return attr
}

// confinement turns a child's set-up report into what a Result says:
// the layers in force, and every layer that is missing (namespaces
// included) with a warning.
func (h *Sandbox) confinement(rep proto.ChildReport, p proto.ChildPolicy) sandbox.Confinement {
	conf := sandbox.Confinement{Backend: backendName}
	enforced := toLayers(rep.Enforced)
	conf.Enforced = append([]sandbox.Layer{sandbox.LayerWorkdir, sandbox.LayerArgs, sandbox.LayerEnv, sandbox.LayerProcessGroup}, enforced...)
	conf.Missing = toLayers(rep.Missing)
	conf.Warnings = append([]string(nil), rep.Warnings...)
	for _, ns := range []struct {
		l    sandbox.Layer
		want bool
		what string
	}{
		{sandbox.LayerUserNS, true, "no user namespace: the command's uid is a host uid"},
		{sandbox.LayerPIDNS, true, "no pid namespace: host processes are visible, and processes that leave the command's session may survive it"},
		{sandbox.LayerNetNS, p.DenyNetwork, "no network namespace: the network is denied by seccomp and Landlock only"},
		{sandbox.LayerMountNS, true, ""},
	} {
		if !ns.want || slices.Contains(enforced, ns.l) || slices.Contains(conf.Missing, ns.l) || rep.FailedLayer != "" {
			continue
		}
		if ns.l == sandbox.LayerUserNS && os.Geteuid() == 0 && slices.Contains(enforced, sandbox.LayerMountNS) && !h.simulated(sandbox.LayerUserNS) {
			continue // root needs no user namespace for the others
		}
		conf.Missing = append(conf.Missing, ns.l)
		if ns.what != "" {
			conf.Warnings = append(conf.Warnings, ns.what)
		}
	}
	for _, nf := range h.notFound {
		conf.Warnings = append(conf.Warnings, fmt.Sprintf("AllowedPaths entry %s does not exist: nothing was granted for it", nf))
	}
	conf.LandlockABI = rep.LandlockABI
	return conf
}

// violations adds what a run observed to res: the system calls the
// seccomp filter refused, a kill by the filter, and the protected paths
// the command created.
func violations(res *sandbox.Result, refused []string, sigsys bool, created []sandbox.Violation) {
	for _, r := range refused {
		res.Violations = append(res.Violations, sandbox.Violation{
			Kind: sandbox.ViolationRefusedSyscall, Subject: r,
			Detail: "the seccomp filter refused this system call (the command got an error and went on)",
		})
	}
	res.Violations = append(res.Violations, created...)
	if sigsys {
		res.Violations = append(res.Violations, sandbox.Violation{
			Kind: sandbox.ViolationForbiddenSyscall, Subject: "SIGSYS",
			Detail: "the seccomp filter killed the command for a forbidden system call (another architecture's, or x32)",
		})
	}
}

// runOnce runs cmd (or, with probe, only the set-up) in a child of its
// own: the fallback when no launcher serves the sandbox.
func (h *Sandbox) runOnce(ctx context.Context, cmd sandbox.Command, dir string, pol runPolicy, probe bool) (sandbox.Result, error) {
	conf := sandbox.Confinement{Backend: backendName}
	// One empty host directory per run: the mount point of the new root's
	// tmpfs, or, without a mount namespace, the command's TMPDIR.
	runDir, err := os.MkdirTemp("", "reins-hardened-")
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Reason: "creating the run directory: " + err.Error()})
	}
	defer os.RemoveAll(runDir)
	p, err := h.childPolicy(runDir, pol)
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Reason: "preparing the run: " + err.Error()})
	}
	p.Args, p.Probe, p.CmdEnv = cmd.Args, probe, cmd.Env
	if dir != "" {
		p.Dir = dir
	}
	if probe {
		p.Args = []string{"probe"}
	}
	before := protectedSet(pol.masks, pol.protectedRO)

	useUserNS := !h.simulated(sandbox.LayerUserNS) && !h.noUserNS.Load()
	pr, rep, err := h.spawn(ctx, cmd, p, h.nsAttr(&p, useUserNS))
	if err != nil && useUserNS && isNamespaceErr(err) {
		// User namespaces are not available here; remember and retry.
		h.noUserNS.Store(true)
		pr, rep, err = h.spawn(ctx, cmd, p, h.nsAttr(&p, false))
	}
	if err != nil {
		return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Reason: "starting the sandbox child: " + err.Error()})
	}
	conf = h.confinement(rep, p)
	conf.Warnings = append(conf.Warnings, pol.warnings...)
	if rep.FailedLayer != "" || (rep.Failure != "" && !pr.TimedOut) {
		conf.Enforced = nil
		res, uerr := backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Layer: sandbox.Layer(rep.FailedLayer), Reason: rep.Failure})
		res.Stderr = append(pr.Stderr.Bytes(), res.Stderr...)
		return res, uerr
	}
	if probe {
		if !rep.ProbeOK {
			return backend.Unavailable(conf, &sandbox.UnavailableError{Backend: backendName, Reason: fmt.Sprintf("the sandbox child did not complete its set-up (exit code %d): %s", pr.ExitCode, pr.Stderr.Bytes())})
		}
		return sandbox.Result{Confinement: conf}, nil
	}
	res := procResult(pr, conf)
	violations(&res, rep.Refused, pr.Signal == syscall.SIGSYS || rep.CmdSignal == int(syscall.SIGSYS), h.createdProtected(before))
	if !rep.Started && rep.ExecError == "" && !pr.TimedOut {
		// The child died before it reported: never claim confinement.
		res.Confinement.Enforced = nil
		res, uerr := backend.Unavailable(res.Confinement, &sandbox.UnavailableError{Backend: backendName, Reason: fmt.Sprintf("the sandbox child exited before the command started (exit code %d)", pr.ExitCode)})
		res.Stderr = append(pr.Stderr.Bytes(), res.Stderr...)
		return res, uerr
	}
	return res, nil
}

// isNamespaceErr reports whether a start error means that the requested
// namespaces cannot be created by this process.
func isNamespaceErr(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) || errors.Is(err, syscall.EACCES)
}

// spawn starts the child, sends it the policy and collects its report.
func (h *Sandbox) spawn(ctx context.Context, cmd sandbox.Command, p proto.ChildPolicy, attr *syscall.SysProcAttr) (*proc.Result, proto.ChildReport, error) {
	policyR, policyW, err := os.Pipe()
	if err != nil {
		return nil, proto.ChildReport{}, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		policyR.Close()
		policyW.Close()
		return nil, proto.ChildReport{}, err
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, proto.ChildReport{}, err
	}
	// A policy that fits in the pipe buffer is written before the child
	// starts, so the child never waits for it; a larger one is written
	// once the child runs and reads.
	prewritten := false
	if len(payload) <= proto.PipeAtomic {
		if _, err := policyW.Write(payload); err == nil {
			prewritten = true
			policyW.Close()
		}
	}
	reports := make(chan proto.ChildReport, 1)
	spec := proc.Spec{
		Path:       "/proc/self/exe",
		Args:       []string{proto.ChildArg0},
		Dir:        "/",
		Env:        []string{},
		Stdin:      cmd.Stdin,
		ExtraFiles: []*os.File{policyR, statusW},
		Attr:       attr,
		Timeout:    timeout(cmd),
		MaxOutput:  maxOutput(cmd),
		Started: func() error {
			policyR.Close()
			statusW.Close()
			go func() {
				var last proto.ChildReport
				sc := bufio.NewScanner(statusR)
				sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
				for sc.Scan() {
					var r proto.ChildReport
					if json.Unmarshal(sc.Bytes(), &r) == nil {
						last = r
					}
				}
				statusR.Close()
				reports <- last
			}()
			if prewritten {
				return nil
			}
			_, err := policyW.Write(payload)
			policyW.Close()
			return err
		},
	}
	pr := proc.Run(ctx, spec)
	if !pr.DidStart {
		policyR.Close()
		policyW.Close()
		statusR.Close()
		statusW.Close()
		return nil, proto.ChildReport{}, pr.StartErr
	}
	return &pr, <-reports, nil
}

func layerStrings(ls []sandbox.Layer) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return out
}

func toLayers(ss []string) []sandbox.Layer {
	out := make([]sandbox.Layer, len(ss))
	for i, l := range ss {
		out[i] = sandbox.Layer(l)
	}
	return out
}

// appendIDMap adds a one-id identity mapping for id unless it is mapped.
func appendIDMap(m []syscall.SysProcIDMap, id int) []syscall.SysProcIDMap {
	for _, e := range m {
		if id >= e.ContainerID && id < e.ContainerID+e.Size {
			return m
		}
	}
	m = append(m, syscall.SysProcIDMap{ContainerID: id, HostID: id, Size: 1})
	slices.SortFunc(m, func(a, b syscall.SysProcIDMap) int { return a.ContainerID - b.ContainerID })
	return m
}

// procResult converts what proc.Run observed into a Result.
func procResult(pr *proc.Result, conf sandbox.Confinement) sandbox.Result {
	r := sandbox.Result{
		ExitCode:        pr.ExitCode,
		Stdout:          pr.Stdout.Bytes(),
		Stderr:          pr.Stderr.Bytes(),
		StdoutTruncated: pr.Stdout.Truncated(),
		StderrTruncated: pr.Stderr.Truncated(),
		TimedOut:        pr.TimedOut,
		Duration:        pr.Duration,
		Confinement:     conf,
	}
	if pr.StartErr != nil {
		r.ExitCode = sandbox.ExitUnavailable
		r.Stderr = append(r.Stderr, []byte("sandbox: "+backendName+": "+pr.StartErr.Error()+"\n")...)
	}
	return r
}

// fileOwner returns the owner of path.
func fileOwner(path string) (uid, gid int, ok bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
