package main

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// mapped is a tool call as the gate decides it, with what the hook must look at besides.
type mapped struct {
	a policy.Action
	// patterns are reads through a pattern (a search's file filter, a glob): the gate decides the
	// files they match (see expandPatterns).
	patterns []patternRead
	// widen, when set, is a field of the call that asks the client to loosen its own sandbox
	// (Claude Code's dangerouslyDisableSandbox, Gemini CLI's additional_permissions): such a call
	// is never allowed without asking.
	widen string
}

// patternRead is a read of the files under dir that pattern matches (slash-separated; a pattern
// without a slash matches a file name at any depth, as ripgrep's --glob and Gemini CLI's
// include patterns do).
type patternRead struct {
	dir, pattern string
}

// maxTargets bounds the paths one call names (read_many_files' include list, a patch's files).
const maxTargets = 256

// inert are the tools that touch neither files, the network nor programs: a to-do list, a
// question to the user, plan-mode switches, a subagent (whose own tool calls pass the hook one by
// one). Anything not listed here or mapped below is decided as an unknown tool.
var inert = map[string]map[string]bool{
	"claude": {"TodoWrite": true, "AskUserQuestion": true, "ExitPlanMode": true, "EnterPlanMode": true,
		"TaskCreate": true, "TaskGet": true, "TaskUpdate": true, "TaskList": true, "Agent": true, "Task": true},
	"gemini": {"write_todos": true, "ask_user": true, "enter_plan_mode": true, "exit_plan_mode": true,
		"update_topic": true, "complete_task": true, "invoke_agent": true},
	"codex": {"spawn_agent": true},
}

// action maps the call to what the gate decides. Tool names and input fields are the clients'
// own: Claude Code's from sdk-tools.d.ts (2.1.332), Gemini CLI's from
// packages/core/src/tools/definitions (base-declarations.ts, model-family-sets), Codex CLI's from
// its hooks' HookToolName and the handlers' pre_tool_use_payload.
func (k *call) action() (mapped, error) {
	m := mapped{a: policy.Action{Tool: k.tool, WorkDir: k.cwd, Input: string(k.raw)}}
	a := &m.a
	var err error
	str := func(key string) string {
		if err != nil {
			return ""
		}
		v, ok := k.input[key]
		if !ok || v == nil {
			return ""
		}
		s, isStr := v.(string)
		if !isStr {
			err = fmt.Errorf("tool_input.%s of %s is not a string", key, k.tool)
		}
		return s
	}
	need := func(key string) string {
		s := str(key)
		if err == nil && s == "" {
			err = fmt.Errorf("tool_input.%s of %s is missing", key, k.tool)
		}
		return s
	}
	target := func(p string) {
		if p != "" {
			a.Targets = append(a.Targets, k.path(p))
		}
	}
	dirOr := func(key string) string {
		if d := str(key); d != "" {
			return k.path(d)
		}
		return k.cwd
	}
	if inert[k.c.name][k.tool] {
		a.Operation, a.Risk = policy.Operation("inert"), risk.Of(risk.ReadOnly)
		return m, nil
	}
	switch k.c.name + ":" + k.tool {
	// Claude Code.
	case "claude:Bash":
		a.Operation, a.Command = policy.OpShell, need("command")
		if b, _ := k.input["dangerouslyDisableSandbox"].(bool); b {
			m.widen = "dangerouslyDisableSandbox is set"
		}
	case "claude:Monitor":
		// A command it runs is a shell action; a WebSocket it opens reaches that host.
		if a.Command = str("command"); a.Command != "" {
			a.Operation = policy.OpShell
		} else if ws, ok := k.input["ws"].(map[string]any); ok {
			u, _ := ws["url"].(string)
			a.Operation, a.Host, err = policy.OpNetwork, hostOf(u), nil
			if a.Host == "" {
				err = fmt.Errorf("tool_input.ws.url of Monitor is not a URL with a host: %q", cut(u, 200))
			}
		} else {
			err = fmt.Errorf("tool_input of Monitor has neither a command nor a ws.url")
		}
	case "claude:Read":
		a.Operation = policy.OpRead
		target(need("file_path"))
	case "claude:Grep":
		a.Operation = policy.OpRead
		dir := dirOr("path")
		target(dir)
		if g := str("glob"); g != "" {
			m.patterns = append(m.patterns, patternRead{dir: dir, pattern: g})
		}
	case "claude:Glob":
		a.Operation = policy.OpRead
		dir := dirOr("path")
		target(dir)
		m.patterns = append(m.patterns, patternRead{dir: dir, pattern: need("pattern")})
	case "claude:Write", "claude:Edit", "claude:MultiEdit":
		a.Operation = policy.OpWrite
		target(need("file_path"))
	case "claude:NotebookEdit":
		a.Operation = policy.OpWrite
		target(need("notebook_path"))
	case "claude:WebFetch":
		a.Operation = policy.OpNetwork
		u := need("url")
		if a.Host = hostOf(u); err == nil && a.Host == "" {
			err = fmt.Errorf("tool_input.url of WebFetch is not a URL with a host: %q", cut(u, 200))
		}
	case "claude:WebSearch":
		a.Operation = policy.OpNetwork

	// Gemini CLI.
	case "gemini:run_shell_command":
		a.Operation, a.Command = policy.OpShell, need("command")
		a.WorkDir = dirOr("dir_path")
		if p, ok := k.input["additional_permissions"]; ok && p != nil {
			m.widen = "additional_permissions is set"
		}
	case "gemini:read_file":
		a.Operation = policy.OpRead
		target(need("file_path"))
	case "gemini:list_directory":
		a.Operation = policy.OpRead
		target(dirOr("dir_path"))
	case "gemini:glob":
		a.Operation = policy.OpRead
		dir := dirOr("dir_path")
		target(dir)
		m.patterns = append(m.patterns, patternRead{dir: dir, pattern: need("pattern")})
	case "gemini:grep_search":
		a.Operation = policy.OpRead
		dir := dirOr("dir_path")
		target(dir)
		if g := str("include_pattern"); g != "" {
			m.patterns = append(m.patterns, patternRead{dir: dir, pattern: g})
		}
	case "gemini:read_many_files":
		a.Operation = policy.OpRead
		inc, ok := k.input["include"].([]any)
		if !ok || len(inc) == 0 {
			return m, fmt.Errorf("tool_input.include of read_many_files is not a list of paths or patterns")
		}
		if len(inc) > maxTargets {
			return m, fmt.Errorf("tool_input.include of read_many_files has %d entries, more than %d", len(inc), maxTargets)
		}
		target(k.cwd)
		for i, v := range inc {
			s, isStr := v.(string)
			if !isStr || s == "" {
				return m, fmt.Errorf("tool_input.include[%d] of read_many_files is not a path or pattern", i)
			}
			if strings.ContainsAny(s, "*?[{") {
				m.patterns = append(m.patterns, patternRead{dir: k.cwd, pattern: s})
			} else {
				target(s)
			}
		}
	case "gemini:write_file", "gemini:replace":
		a.Operation = policy.OpWrite
		target(need("file_path"))
	case "gemini:web_fetch":
		// The prompt holds the URLs. One host is decided as that host; none or several as the
		// network at large (no host the profile could allow).
		a.Operation = policy.OpNetwork
		hosts := urlHosts(need("prompt"))
		if len(hosts) == 1 {
			a.Host = hosts[0]
		}
	case "gemini:google_web_search":
		a.Operation = policy.OpNetwork

	// Codex CLI.
	case "codex:Bash":
		a.Operation, a.Command = policy.OpShell, need("command")
	case "codex:apply_patch":
		a.Operation = policy.OpWrite
		files, perr := patchFiles(need("command"))
		if err == nil && perr != nil {
			err = perr
		}
		for _, f := range files {
			target(f)
		}
		if err == nil && len(a.Targets) == 0 {
			err = fmt.Errorf("the patch of apply_patch names no file")
		}

	default:
		// An MCP tool (mcp__server__tool, Gemini CLI's mcp_server_tool) or a tool this hook does
		// not know: no declared risk, which the gate treats as destructive.
		a.Operation = policy.OpTool
	}
	if err == nil && len(a.Targets) > maxTargets {
		err = fmt.Errorf("%s names %d paths, more than %d", k.tool, len(a.Targets), maxTargets)
	}
	return m, err
}

// path makes p absolute against the client's current directory.
func (k *call) path(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(k.cwd, p)
}

// hostOf returns the host of an http(s) URL, "" when it has none.
func hostOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

var urlPattern = regexp.MustCompile(`https?://[^\s"'<>()]+`)

// urlHosts returns the distinct hosts of the URLs in s (at most 21, one more than Gemini CLI's
// web_fetch takes).
func urlHosts(s string) []string {
	var out []string
	for _, u := range urlPattern.FindAllString(s, 21) {
		h := hostOf(u)
		if h == "" {
			h = "?"
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// patchFiles returns the files a Codex apply_patch patch adds, updates, deletes or moves to: the
// paths of its "*** Add File: ", "*** Update File: ", "*** Delete File: " and "*** Move to: "
// lines (codex-rs/apply-patch's grammar). A patch that does not start with "*** Begin Patch" is
// refused.
func patchFiles(patch string) ([]string, error) {
	lines := strings.Split(patch, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "*** Begin Patch" {
		return nil, fmt.Errorf("the patch of apply_patch does not start with \"*** Begin Patch\"")
	}
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, "\r")
		for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(l, h); ok {
				p = strings.TrimSpace(p)
				if p == "" || strings.ContainsRune(p, 0) {
					return nil, fmt.Errorf("the patch of apply_patch has an empty or invalid path after %q", strings.TrimSpace(h))
				}
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
				if len(out) > maxTargets {
					return nil, fmt.Errorf("the patch of apply_patch names more than %d files", maxTargets)
				}
			}
		}
	}
	return out, nil
}
