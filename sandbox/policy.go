package sandbox

import "github.com/reins-go/reins/sandbox/internal/pathmatch"

// FsNetPolicy is the file-system, network and environment policy of a
// backend. The zero value is usable: the default denied paths, no extra
// writable paths, no network for the backends that can enforce that, and
// the backend's own environment rule.
type FsNetPolicy struct {
	// AllowedPaths are directories, besides the root, that the command
	// may write. The hardened backend binds them writable; local ignores
	// them because it does not confine writes.
	AllowedPaths []string
	// AllowNetwork lets the command use sockets other than AF_UNIX.
	// Local cannot deny the network and ignores it.
	AllowNetwork bool
	// DeniedPaths are added to [DefaultDeniedPaths], which always apply.
	// A relative entry ("secrets/prod.json") matches wherever its
	// components appear as consecutive components of a path; an absolute
	// entry matches that path and everything beneath it. Matching is
	// case-insensitive and applies both to the path as written and to the
	// path with every symlink followed.
	DeniedPaths []string
	// WriteProtectedPaths are added to the write-protected entries of
	// [DefaultDeniedPaths] (.git, .envrc, shell rc files, editor
	// configuration...) and get their treatment: the command may read
	// them but never write, create, rename, delete or replace them. They
	// take the syntax of DeniedPaths; an entry in both lists is denied
	// (read-and-write protected, the stricter class). Per backend, as for
	// the defaults' write-protected entries: hardened binds those that
	// exist in the writable roots read-only (unmasked) and reports a new
	// one a run created as an escape; local, container and remote refuse
	// an argument or working directory that names one, and container
	// binds them read-only (local confines no writes: see [Local]). The
	// argument checks of every backend refuse a word that names one, as
	// they refuse .git: the command reaches them through programs that
	// read them, not by naming them.
	WriteProtectedPaths []string
	// EnvAllowlist, when non-empty, clears the environment and forwards
	// only the host variables named here (exact, case-sensitive names).
	// When empty, local passes the host environment through and the
	// hardened backend uses [DefaultEnvAllowlist]. Command.Env is not
	// filtered: what the host puts there always reaches the command.
	EnvAllowlist []string
}

// DefaultDeniedPaths returns the paths every policy denies: the seeds' .git, .env, .env.local,
// .ssh, id_rsa and id_ed25519 first, then the rest of reins' two protection classes, the same
// lists the gate and the built-in profiles use (secrets such as .env.* and ~/.aws, and
// write-protected files such as .envrc, shell rc files and .vscode). It returns a new slice on
// each call.
func DefaultDeniedPaths() []string { return pathmatch.DefaultDenied() }

// DefaultEnvAllowlist returns the variables the hardened backend forwards
// when the policy's EnvAllowlist is empty.
func DefaultEnvAllowlist() []string {
	return []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"}
}
