// Package fspath is reins' one path model, shared by the gate, the sandbox and checkpoints so
// their rules cannot drift apart:
//
//   - [Workspace.Resolve]: symlink-safe resolution of a target against the workspace roots, as
//     the kernel reads it when a writer creates it, with one rule for ambiguity: a target whose
//     kernel reading and lexical reading (filepath.Clean, which filepath.Join applies) name
//     different files is refused with an [*AmbiguousError]. A ".." after a directory that does
//     not exist yet is applied to the real directories, never lexically. Two more kinds of
//     target are refused the same way, because the process that opens them decides where they
//     lead: a path through a proc filesystem link to a process's state (/proc/self/cwd,
//     /proc/<pid>/root, /dev/fd/N, /dev/stdin, and every spelling or link that reaches one:
//     the gate's own state is not the command's), and a leading "~user" or "$VAR" expansion
//     (a leading "~" and "$HOME" are the home directory, as a shell reads them). Each root is
//     checked on use to still be the directory [NewWorkspace] found; one that was moved or
//     replaced by a link is resolved by what it leads to now. On Linux a clean target is
//     checked with one openat2 call on its whole path (RESOLVE_NO_SYMLINKS,
//     RESOLVE_NO_MAGICLINKS), so its cost does not grow with depth; anything else is walked
//     component by component, and the walk decides.
//   - [Within] and [WithinFold]: the one definition of "p is dir or under it".
//   - [Platform]: the lexical rules of Linux, macOS and Windows (drive letters, UNC volumes,
//     backslashes), usable with synthetic paths on every platform.
//   - [Expand]: ~ and $HOME expansion of configured entries; an entry that cannot be expanded is
//     an error, never dropped.
//   - [Defaults] and [Matcher]: the two protection classes (read-and-write protected secrets,
//     write-protected files that make other programs run code or change an agent's
//     permissions), matched on path components with ASCII case folded. [Lists.WithSeeds] adds
//     the seeds' six denied names, .git among the secrets: a direct read of .git/config shows
//     remote URLs, which can hold tokens ([Defaults] keeps .git write-protected, for a sandbox
//     where git itself reads it).
//   - [Identities]: the protected files known by device and inode, so a hard link to one (a
//     second name that matches nothing) has its protection. Only a regular file with several
//     links is looked up; the index is built on first need and rebuilt when a target's change
//     time or a root's says it may be stale.
//
// In the gate's decision order this is layer 3, boundaries: every target and every path a shell
// command touches is resolved here and matched against both classes, by name and by identity,
// in every mode.
//
// What this package does not do: resolution reads the filesystem at decision time, so a link
// created between the decision and the action is not seen (the hardened sandbox, where the
// kernel checks each access, is what enforces). Matching sees names and identities, not
// contents: a secret copied to an innocuous name is not protected. The identity index covers
// the workspace roots, the absolute entries and the protected entries at the top of the home
// directory, not the whole filesystem: a hard link to a protected file elsewhere (another
// project's .env) is not found, nor is a bind mount. Outside Linux, /proc and /dev/fd links are
// not recognised (macOS's /dev/fd are not links), and Windows has no identity index.
package fspath
