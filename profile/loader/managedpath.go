package loader

import (
	"os"
	"path/filepath"
	"runtime"
)

// Default names of the managed tier's files, in the directory ManagedDir returns.
const (
	DefaultManagedFile = "managed-profile.json" // the managed profile file
	DefaultBundleFile  = "policy-bundle.json"   // a signed policy bundle
)

// ManagedDir returns the directory of the managed tier's files on this operating system: where
// an administrator puts settings that apply to every user of the machine and that no user file
// can override. It follows the places the agent CLIs use for their administrator-managed
// settings (Claude Code's managed-settings.json, Gemini CLI's system settings.json, Codex CLI's
// requirements.toml and managed_config.toml: a directory of the product's own under /etc on
// Linux and other Unix systems, under /Library/Application Support on macOS, under
// %ProgramData% on Windows), with reins' own directory name:
//
//	Linux, BSD and other Unix   /etc/reins
//	macOS                       /Library/Application Support/reins
//	Windows                     %ProgramData%\reins (C:\ProgramData\reins when the variable
//	                            is unset or not absolute)
func ManagedDir() string { return managedDir(runtime.GOOS, os.Getenv("ProgramData")) }

func managedDir(goos, programData string) string {
	switch goos {
	case "darwin", "ios":
		return "/Library/Application Support/reins"
	case "windows":
		if programData == "" || !filepath.IsAbs(programData) {
			programData = `C:\ProgramData`
		}
		return filepath.Join(programData, "reins")
	case "js", "wasip1", "plan9":
		return "" // no system-wide configuration directory
	}
	return "/etc/reins"
}
