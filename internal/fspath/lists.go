package fspath

import "slices"

// Class is how a path is protected. Read-and-write protection includes write protection.
type Class uint8

const (
	// Unprotected: neither list holds the path.
	Unprotected Class = iota
	// WriteProtected paths make other programs run code or change what an agent may do (.git,
	// shell rc files, editor and agent configuration): they may be read, never written, created
	// or deleted. The hardened sandbox mounts them read-only.
	WriteProtected
	// ReadWriteProtected paths are secrets (.env, SSH keys, credential stores): they are neither
	// read nor written. The hardened sandbox masks them.
	ReadWriteProtected
)

// String returns "unprotected", "write-protected" or "read-write-protected".
func (c Class) String() string {
	switch c {
	case Unprotected:
		return "unprotected"
	case WriteProtected:
		return "write-protected"
	case ReadWriteProtected:
		return "read-write-protected"
	}
	return "Class(?)"
}

// Denies reports whether class c forbids the access: a read when write is false.
func (c Class) Denies(write bool) bool {
	return c == ReadWriteProtected || write && c == WriteProtected
}

// seeds are the autonomy and sandbox seeds' default denied paths. They are always protected:
// a profile may not narrow them.
//
// The seeds deny .git outright, and so does [Lists.WithSeeds] (what the gate applies to the paths
// an action names): a direct read of .git/config shows remote URLs, which can hold tokens.
// git's own commands keep working, because they do not name .git: the gate's shell analysis
// knows them by their options, and repository trust vets the configuration they run. The
// default lists ([Defaults]) keep .git write-protected only: they are also what a sandbox mounts,
// and git, running inside it, must read its repository (issue 23).
var seeds = [...]struct {
	name  string
	class Class
}{
	{".git", ReadWriteProtected}, // see above: denied to paths an action names, readable to git
	{".env", ReadWriteProtected},
	{".env.local", ReadWriteProtected},
	{".ssh", ReadWriteProtected},
	{"id_rsa", ReadWriteProtected},
	{"id_ed25519", ReadWriteProtected},
}

// secrets is the read-and-write protected list: the seeds' secrets, every .env variant, other
// private key file names, and the user's credential stores outside the workspace.
var secrets = []string{
	".env", ".env.local", ".ssh", "id_rsa", "id_ed25519",
	".env.*",             // .env.production, .env.development.local, ...
	"id_ecdsa", "id_dsa", // the other OpenSSH private key names
	".netrc", ".git-credentials", // credentials wherever they are copied
	"~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.docker/config.json",
	"~/.npmrc", "~/.pypirc", "~/.gnupg", "~/.config/gh", "~/.config/hub",
	"~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.gem/credentials",
	"~/.terraform.d/credentials.tfrc.json", "~/.vault-token", "~/.pgpass",
}

// writeProtected is the write-protected list: what makes git, shells, editors, CI and agents run
// code or grant permissions.
var writeProtected = []string{
	".git", ".gitmodules", ".gitconfig", // hooks, filters, fsmonitor, core.sshCommand, ...
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".config/fish",
	".envrc",           // direnv runs it on cd
	".mcp.json",        // MCP servers an agent starts
	".vscode", ".idea", // tasks, launch configurations, run configurations
	".claude", ".codex", ".cursor", ".gemini", // agent settings and permissions
	".reins",                           // reins' own project configuration
	".ripgreprc",                       // rg --pre runs a program
	".npmrc", ".yarnrc", ".yarnrc.yml", // script-shell, node-options, yarnPath
	".pre-commit-config.yaml", ".husky", // commit hooks
	".github/workflows", // CI that runs with the repository's secrets
}

// Lists are the two protection classes' entries. An entry is a component name matched anywhere
// in a path (".git" protects "sub/.git/config"), a run of names (".github/workflows"), or an
// absolute path ("/etc", "~/.aws", "$HOME/.kube") protected with everything under it. A name may
// hold the wildcards * and ? (".env.*"); nothing else is a pattern. Matching folds ASCII case.
type Lists struct {
	// ReadWrite are the secrets: never read or written.
	ReadWrite []string
	// Write are never written.
	Write []string
}

// Defaults returns the one definition of the default protection lists, as new slices: the gate,
// the sandbox and the built-in profiles all start from it.
func Defaults() Lists {
	return Lists{ReadWrite: slices.Clone(secrets), Write: slices.Clone(writeProtected)}
}

// Seeds returns the six names of the seeds' default denied paths (.git, .env, .env.local, .ssh,
// id_rsa, id_ed25519). They are always protected, each in its class, whatever a profile says:
// narrowing them is refused.
func Seeds() []string {
	out := make([]string, len(seeds))
	for i, s := range seeds {
		out[i] = s.name
	}
	return out
}

// SeedClass returns the class a seed name always has, or Unprotected when entry is not one of
// the six (compared ignoring ASCII case and a trailing slash).
func SeedClass(entry string) Class {
	for len(entry) > 1 && entry[len(entry)-1] == '/' {
		entry = entry[:len(entry)-1]
	}
	for _, s := range seeds {
		if equalFold(entry, s.name) {
			return s.class
		}
	}
	return Unprotected
}

// WithSeeds returns l with every seed added to its class where l lacks it (.git is added to
// ReadWrite even where Write holds it: see seeds).
func (l Lists) WithSeeds() Lists {
	out := Lists{ReadWrite: slices.Clone(l.ReadWrite), Write: slices.Clone(l.Write)}
	for _, s := range seeds {
		dst := &out.Write
		if s.class == ReadWriteProtected {
			dst = &out.ReadWrite
		}
		if !slices.ContainsFunc(*dst, func(e string) bool { return equalFold(e, s.name) }) {
			*dst = append(*dst, s.name)
		}
	}
	return out
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}
