package checkpoint

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults used when the corresponding [Options] field is zero.
const (
	// DefaultMaxFileSize is the per-file size cap (32 MiB).
	DefaultMaxFileSize int64 = 32 << 20
	// DefaultLockTimeout is how long an operation waits for the workspace
	// lock held by another Checkpointer or process.
	DefaultLockTimeout = time.Minute
)

// OversizePolicy says what a snapshot does with a file above the size cap.
type OversizePolicy uint8

const (
	// OversizeFail makes the snapshot fail with a [*FileTooLargeError]
	// naming the file. It is the zero value: a snapshot never silently
	// covers less than the whole workspace unless the host asked for it.
	OversizeFail OversizePolicy = iota
	// OversizeSkip leaves the file out of the snapshot and reports it in
	// [Checkpoint.Skipped]. A skipped file is treated like an ignored one:
	// restores leave it alone, and a restore that would have to overwrite
	// it fails.
	OversizeSkip
)

// String returns "fail" or "skip".
func (p OversizePolicy) String() string {
	switch p {
	case OversizeFail:
		return "fail"
	case OversizeSkip:
		return "skip"
	}
	return fmt.Sprintf("OversizePolicy(%d)", uint8(p))
}

// Options configures a [Checkpointer]. A nil *Options means all defaults;
// [New] copies the struct, so later changes have no effect.
type Options struct {
	// GitPath is the git binary: a path, or a name looked up in PATH.
	// Default "git". A missing binary makes New fail with [ErrGitNotFound].
	GitPath string

	// ShadowRoot is the directory under which workspaces that are not in
	// a git repository get their shadow repository, one per workspace in
	// a subdirectory named after the workspace and a hash of its path.
	// Default: <os.UserCacheDir()>/reins/checkpoints.
	ShadowRoot string

	// IncludeIgnored snapshots (and so restores and deletes) files that
	// .gitignore, .git/info/exclude or Exclude would leave out. Default
	// false: ignored files are neither recorded nor touched by a restore.
	IncludeIgnored bool

	// Exclude holds extra ignore patterns in .gitignore syntax, applied on
	// top of the workspace's own ignore files (for example "node_modules/").
	// They apply even when IncludeIgnored is set.
	Exclude []string

	// Protected are the protection lists, in the form and with the meaning
	// the gate gives them (see [Protection]): pass the lists the gate
	// compiled from the active profile, so that one list reaches the gate,
	// the sandbox and the checkpoints. nil means reins' default lists
	// (internal/fspath): secrets (.env, .env.local, .env.*, .ssh, id_rsa,
	// id_ed25519, other private key and credential file names, the
	// credential stores in the home directory) and write-protected paths
	// (.git, shell rc files, .envrc, editor and agent configuration,
	// .reins, CI workflows). Non-nil lists are used as given (a profile may
	// narrow the defaults with unprotected_paths, and the gate then allows
	// what it unprotects), plus the seeds' six names (.git, .env,
	// .env.local, .ssh, id_rsa, id_ed25519), which are always protected. A
	// path that either class protects is never stored in a checkpoint (no
	// object, tree, index entry or file of the checkpoint store holds its
	// content) and never written or deleted by a restore, whether or not
	// it is ignored. An entry the gate would refuse (a pattern other than
	// * and ?, "..", ~user, ~ without a home directory) makes [New] fail
	// naming it.
	Protected *Protection

	// MaxFileSize is the size cap per file in bytes. 0 means
	// DefaultMaxFileSize; a negative value means no cap.
	MaxFileSize int64

	// Oversize says what to do with a file above the cap. Default
	// OversizeFail.
	Oversize OversizePolicy

	// LockTimeout bounds how long an operation waits for the workspace
	// lock before failing with [ErrLocked]. 0 means DefaultLockTimeout; a
	// negative value means do not wait at all. The context's deadline
	// applies as well.
	LockTimeout time.Duration

	// OnEvent, when set, receives a [Created], [Restored] or [Pruned]
	// event after each operation, synchronously and with no lock held (so
	// it may call back into the Checkpointer). Default: no events.
	OnEvent func(Event)

	// Clock supplies the time recorded as a checkpoint's creation time and
	// used for [PruneOptions.OlderThan]. Default time.Now.
	Clock func() time.Time
}

func (o *Options) validate() error {
	if o.Oversize > OversizeSkip {
		return fmt.Errorf("checkpoint: Options.Oversize: unknown policy %d", o.Oversize)
	}
	for i, p := range o.Exclude {
		if p == "" || strings.ContainsAny(p, "\n\r\x00") || !utf8.ValidString(p) {
			return fmt.Errorf("checkpoint: Options.Exclude[%d]: %q is not a single-line ignore pattern", i, p)
		}
	}
	if o.Protected != nil {
		if err := validProtection(*o.Protected); err != nil {
			return err
		}
	}
	if strings.ContainsRune(o.ShadowRoot, 0) {
		return fmt.Errorf("checkpoint: Options.ShadowRoot: contains NUL")
	}
	return nil
}

func (o *Options) maxFileSize() int64 {
	switch {
	case o.MaxFileSize == 0:
		return DefaultMaxFileSize
	case o.MaxFileSize < 0:
		return -1
	}
	return o.MaxFileSize
}

func (o *Options) lockTimeout() time.Duration {
	switch {
	case o.LockTimeout == 0:
		return DefaultLockTimeout
	case o.LockTimeout < 0:
		return 0
	}
	return o.LockTimeout
}

func (o *Options) now() time.Time {
	if o.Clock != nil {
		return o.Clock()
	}
	return time.Now()
}
