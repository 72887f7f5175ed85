package main

import (
	"encoding/json"
	"strings"
)

// The clients' reading of a hook's answer, modelled on their shipped code, so that a test checks
// what the client will do with an answer rather than the answer's shape alone.

// geminiReads is what Gemini CLI makes of a BeforeTool hook's exit status and output
// (google-gemini/gemini-cli 5411f113, 0.56.0-nightly.20260806: hookRunner.ts executeCommandHook
// and convertPlainTextToHookOutput, hookAggregator.ts mergeWithOrDecision, hook-utils.ts
// evaluateBeforeToolHook): "allow", "ask" or "deny", the reason, and the replaced arguments.
func geminiReads(code int, stdout, stderr string) (decision, reason string, toolInput map[string]any) {
	text := strings.TrimSpace(stdout)
	if text == "" {
		text = strings.TrimSpace(stderr)
	}
	if text == "" {
		return "allow", "", nil // no output: the merged decision defaults to allow
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		switch code {
		case 0, 1:
			return "allow", "", nil
		default:
			return "deny", text, nil
		}
	}
	d, _ := out["decision"].(string)
	r, _ := out["reason"].(string)
	if spec, ok := out["hookSpecificOutput"].(map[string]any); ok {
		toolInput, _ = spec["tool_input"].(map[string]any)
	}
	switch d {
	case "block", "deny":
		return "deny", r, nil
	case "ask":
		sm, _ := out["systemMessage"].(string)
		return "ask", sm, toolInput
	}
	return "allow", r, toolInput
}

// codexReads is what Codex CLI makes of a PreToolUse hook's exit status and output (openai/codex
// 2219e3df codex-rs/hooks/src/engine/output_parser.rs parse_pre_tool_use and 54ea2bfe
// events/pre_tool_use.rs parse_completed): block with the reason, or run the tool; invalid names
// an output Codex rejects (it then runs the tool: "fails open"). newer applies a later version's
// acceptance of updatedInput with permissionDecision "allow".
func codexReads(code int, stdout, stderr string, newer bool) (block bool, reason, invalid string, updated map[string]any) {
	switch code {
	case 0:
	case 2:
		if r := strings.TrimSpace(stderr); r != "" {
			return true, r, "", nil
		}
		return false, "", "exit 2 without a reason", nil
	default:
		return false, "", "exit status", nil
	}
	text := strings.TrimSpace(stdout)
	if text == "" {
		return false, "", "", nil
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return false, "", "invalid JSON", nil
	}
	if c, ok := out["continue"].(bool); ok && !c {
		return false, "", "continue:false", nil
	}
	if _, ok := out["stopReason"]; ok {
		return false, "", "stopReason", nil
	}
	if s, _ := out["suppressOutput"].(bool); s {
		return false, "", "suppressOutput", nil
	}
	spec, _ := out["hookSpecificOutput"].(map[string]any)
	if spec == nil {
		if d, _ := out["decision"].(string); d == "block" {
			r, _ := out["reason"].(string)
			if strings.TrimSpace(r) == "" {
				return false, "", "block without reason", nil
			}
			return true, strings.TrimSpace(r), "", nil
		} else if d != "" {
			return false, "", "decision:" + d, nil
		}
		return false, "", "", nil
	}
	if ac, _ := spec["additionalContext"].(string); strings.TrimSpace(ac) != "" {
		return false, "", "additionalContext", nil
	}
	pd, _ := spec["permissionDecision"].(string)
	ui, hasUI := spec["updatedInput"].(map[string]any)
	switch {
	case hasUI && !newer:
		return false, "", "updatedInput", nil
	case hasUI && pd == "allow":
		return false, "", "", ui
	case pd == "allow" || pd == "ask":
		return false, "", "permissionDecision:" + pd, nil
	case pd == "deny":
		r, _ := spec["permissionDecisionReason"].(string)
		if strings.TrimSpace(r) == "" {
			return false, "", "deny without reason", nil
		}
		return true, strings.TrimSpace(r), "", nil
	case pd == "":
		if _, ok := spec["permissionDecisionReason"]; ok {
			return false, "", "reason without decision", nil
		}
	}
	return false, "", "", nil
}
