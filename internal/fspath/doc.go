// Package fspath is reins' one path model, shared by the gate, the sandbox and checkpoints so
// their rules cannot drift apart:
//
//   - [Workspace.Resolve]: symlink-safe resolution of a target against the workspace roots, as
//     the kernel reads it when a writer creates it, with one rule for ambiguity: a target whose
//     kernel reading and lexical reading (filepath.Clean, which filepath.Join applies) name
//     different files is refused with an [*AmbiguousError]. A ".." after a directory that does
//     not exist yet is applied to the real directories, never lexically. On Linux the roots are
//     held open and a clean target with no link on its path is checked with one openat2 call
//     beneath its root (RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS), so its cost
//     does not grow with depth; anything else is walked component by component, and the walk
//     decides.
//   - [Within] and [WithinFold]: the one definition of "p is dir or under it".
//   - [Platform]: the lexical rules of Linux, macOS and Windows (drive letters, UNC volumes,
//     backslashes), usable with synthetic paths on every platform.
//   - [Expand]: ~ and $HOME expansion of configured entries; an entry that cannot be expanded is
//     an error, never dropped.
//   - [Defaults] and [Matcher]: the two protection classes (read-and-write protected secrets,
//     write-protected files that make other programs run code or change an agent's
//     permissions), matched on path components with ASCII case folded.
//
// In the gate's decision order this is layer 3, boundaries: every target and every path a shell
// command touches is resolved here and matched against both classes, in every mode.
//
// What this package does not do: resolution reads the filesystem at decision time, so a link
// created between the decision and the action is not seen (the hardened sandbox, where the
// kernel checks each access, is what enforces). Matching sees names, not contents: a secret
// copied to an innocuous name is not protected.
package fspath
