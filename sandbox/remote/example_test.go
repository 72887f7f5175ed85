package remote_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/remote"
)

// The ssh backend runs an argument vector on another host; nothing in
// the arguments is interpreted by the remote shell. Here the ssh client
// is not where the configuration says: the run reports exit code 127 and
// what is missing, and nothing runs.
func ExampleNewSSH() {
	s, err := remote.NewSSH(remote.SSHConfig{
		Host:           "build-1.internal",
		User:           "agent",
		IdentityFile:   "/etc/reins/agent_ed25519",
		KnownHostsFile: "/etc/reins/known_hosts",
		RemoteDir:      "/srv/work/project",
		Policy:         sandbox.FsNetPolicy{EnvAllowlist: []string{"PATH", "HOME", "GOFLAGS"}},
		CLI:            "/nonexistent/ssh",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := s.Run(context.Background(), sandbox.Command{Args: []string{"go", "test", "./...", "-run", "Test(A|B)$"}, Dir: "svc"})
	fmt.Println(errors.Is(err, sandbox.ErrUnavailable), res.ExitCode)
	fmt.Print(string(res.Stderr))
	// Output:
	// true 127
	// sandbox: ssh: unavailable: the ssh CLI is not installed: "/nonexistent/ssh" is not in PATH (install openssh-client, or set SSHConfig.CLI); the command did not run
}

// The checks made on this host come first: a working directory that
// names a denied path is refused (126) before any CLI is looked for.
func ExampleSSH_Run_denied() {
	s, err := remote.NewSSH(remote.SSHConfig{Host: "build-1.internal", RemoteDir: "/srv/work/project"})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := s.Run(context.Background(), sandbox.Command{Args: []string{"ls"}, Dir: ".git/hooks"})
	fmt.Println(errors.Is(err, sandbox.ErrRefused), res.ExitCode, res.Violations[0].Kind)
	// Output:
	// true 126 denied-path
}

// A vendor backend on a host whose PATH lacks the vendor's CLI: exit
// code 127, and stderr names the CLI and how to get it.
func ExampleNewDaytona() {
	empty, _ := os.MkdirTemp("", "example-path-")
	defer os.RemoveAll(empty)
	defer os.Setenv("PATH", os.Getenv("PATH"))
	os.Setenv("PATH", empty)

	d, err := remote.NewDaytona(remote.DaytonaConfig{Sandbox: "agent-sandbox", RemoteDir: "/home/daytona/project"})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := d.Run(context.Background(), sandbox.Command{Args: []string{"npm", "test"}})
	fmt.Println(errors.Is(err, sandbox.ErrUnavailable), res.ExitCode)
	fmt.Print(string(res.Stderr))
	// Output:
	// true 127
	// sandbox: daytona: unavailable: the daytona CLI is not installed: "daytona" is not in PATH (install the Daytona CLI, or set DaytonaConfig.CLI); the command did not run
}

// A host adds this package's backends to its registry next to the local
// ones; Open probes a backend before it hands it out, so a template
// without a host is refused there.
func ExampleRegister() {
	r := sandbox.NewBuiltinRegistry(sandbox.BuiltinOptions{})
	if err := remote.Register(r, remote.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Names())
	_, err := r.Open(context.Background(), "ssh", "/srv/work/project")
	fmt.Println(errors.Is(err, sandbox.ErrUnavailable))
	// Output:
	// [daytona local modal ssh vercel-sandbox]
	// true
}
