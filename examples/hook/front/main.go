// Command front is reins-hook, the program an agent CLI starts for every tool call: it hands
// the call to reins-hook-core (examples/hook), installed beside it, and answers what the core
// answered. On Linux the core stays resident between the calls of one situation (the same core
// binary, arguments, environment, working directory, user and namespaces), so a call costs this
// small program's start-up and the decision, not the start-up of the core with the whole library
// (see the core's daemon verb); elsewhere, or with REINS_HOOK_DAEMON=off, the core is started
// for the call. Any other first argument (exec, reset) goes to the core as it is.
//
// A hook call that no core can answer (none installed beside this program, or a resident core
// that took the call and ended before answering) blocks: exit status 2, the reason on standard
// error.
package main

import (
	"os"
	"slices"

	"github.com/reins-go/reins/examples/hook/internal/hookwire"
)

// exitBlock is the exit status every client reads as "block this call".
const exitBlock = 2

func main() {
	args := os.Args[1:]
	hookCall := len(args) > 0 && slices.Contains(hookwire.Clients, args[0])
	core, err := corePath()
	if err != nil {
		fail(hookCall, "cannot find this program's path: "+err.Error())
	}
	env := os.Environ()
	if hookCall && hookwire.Getenv(env, "REINS_HOOK_DAEMON") != "off" {
		if code, ok := viaDaemon(core, args, env); ok {
			os.Exit(code)
		}
	}
	startCore(core, args, hookCall)
}

// fail reports why the call cannot be handed over: a hook call blocks (2), any other verb is
// a missing program (127).
func fail(hookCall bool, msg string) {
	code := 127
	if hookCall {
		code, msg = exitBlock, msg+"; blocking the call"
	}
	os.Stderr.WriteString("reins-hook: " + msg + "\n")
	os.Exit(code)
}

// stateArg returns the -state flag of a call's arguments (after the client's name), and false
// when the arguments hold something this program does not read as the core would (the core is
// then started for the call, and says what is wrong).
func stateArg(args, env []string) (dir string, ok bool) {
	dir = hookwire.Getenv(env, "REINS_HOOK_STATE")
	valued := []string{"state", "project", "max-actions", "max-failures"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			return "", false
		}
		a = a[1:]
		if a[0] == '-' {
			a = a[1:]
		}
		name, value, hasValue := cut(a, '=')
		switch {
		case name == "codex-updated-input":
		case slices.Contains(valued, name):
			if !hasValue {
				if i+1 == len(args) {
					return "", false
				}
				i++
				value = args[i]
			}
			if name == "state" {
				dir = value
			}
		default:
			return "", false
		}
	}
	return dir, true
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
