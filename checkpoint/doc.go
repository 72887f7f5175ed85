// Package checkpoint snapshots a workspace in git before mutating work,
// rolls it back when that work fails, and keeps a timeline that can be
// rewound to any point.
//
// In the reins decision flow, the gate attaches a Checkpoint obligation to
// mutating actions (the seed's "Notify+Checkpoint" and "Allow+Checkpoint");
// the run satisfies the obligation through a small interface of its own:
// [Checkpointer.Snapshot] for the whole workspace, or
// [Checkpointer.SnapshotPaths] for a line the sandbox confines to a known
// write set (only those paths can change, so only those are recorded), and
// [Checkpointer.Restore] to roll back. [Checkpointer.Batch] also runs the
// work and rolls back on failure. The seed's "rewind [id|n]" is
// [Checkpointer.Rewind] and [Checkpointer.RewindN]. The package imports no
// other reins package besides internal/fspath: the protection lists and the
// matcher it shares with the gate and the sandbox.
//
// # Quick start
//
//	c, err := checkpoint.New(ctx, "/path/to/workspace", nil) // nil: defaults
//	if err != nil {
//		return err // e.g. checkpoint.ErrGitNotFound
//	}
//	res, err := c.Batch(ctx, "apply patch", func(ctx context.Context) error {
//		return applyPatch(ctx) // an error or a panic restores the workspace
//	})
//
//	cp, err := c.Create(ctx, "before refactor") // or by hand
//	// ... the agent edits files ...
//	err = c.Restore(ctx, cp.ID) // exactly the snapshot again
//	list, err := c.List(ctx)    // newest first, with files changed
//	_, err = c.RewindN(ctx, 1)  // undo that restore
//
// # Where snapshots live
//
// A workspace inside a git repository keeps its checkpoints in that
// repository: one commit per checkpoint under refs/reins/checkpoints/<id>,
// with objects in the repository's object store, so that git's own garbage
// collection keeps them until they are pruned. A workspace that is not in a
// repository gets a shadow repository under [Options.ShadowRoot] (by
// default <user cache dir>/reins/checkpoints/<name>-<hash of the path>),
// with the same behaviour. A workspace may be a subdirectory of a
// repository: then only that subdirectory is snapshotted, and its
// checkpoints are kept apart from those of other workspaces of the same
// repository.
//
// The work is done by plumbing commands run against a private git
// directory of the package's own (in .git/reins/ or the shadow
// repository), with a private index file that is kept between snapshots.
// The private index caches each file's stat data and, in a cache tree, the
// trees of the previous full snapshot, at which the private repository's
// HEAD is detached; so a single "git status" on the private index reports,
// in one walk of the tree, what differs from that snapshot (unchanged
// files are compared by their stat data and never read, unchanged
// directories are not compared at all), the untracked files and the
// ignored ones. "git fast-import" stores the changed files, the new trees,
// the commit and the ref in a single pack built on the previous snapshot's
// tree, and the package writes the private index itself (a plain git
// index) with the stat data of the files it read and the object ids
// fast-import gave them: each changed file is read and hashed once. Where
// Go does not give the stat data git records, git maintains the index
// ("update-index --info-only" hashes the changed files into it).
//
// The first snapshot of a workspace inside a repository starts its private
// index from the user's index: files that match what the user's index
// recorded are taken as the objects the repository already holds, without
// being read. That is skipped whenever attributes (a .gitattributes file,
// info/attributes, global or system attributes, configuration naming an
// attributes file) could have made the user's git store converted content,
// and for every entry whose object size is not the file's size.
//
// A restore takes its safety snapshot with the same single walk, finds
// what to write with "diff-tree" between that snapshot and the target (two
// trees that share every directory the work since did not touch), reads
// the content with one "cat-file" and records what it wrote in the private
// index. Packs are merged geometrically once there are more than 32.
//
// Ids are UUIDv7 strings (time-ordered). The label, the reason, the
// correlation id and, for path-scoped snapshots, the covered paths are
// stored as JSON in the commit message; the creation time is the commit's
// own committer date, taken from [Options.Clock]. The list of paths the
// snapshot left out (see Guarantees) is a blob in the tree of the
// checkpoint commit's parent, named in the metadata by its object id, so
// it lives exactly as long as the checkpoint.
//
// # Guarantees
//
//   - A snapshot covers tracked changes, deletions and untracked files;
//     files matched by .gitignore, .git/info/exclude or [Options.Exclude]
//     are left out unless [Options.IncludeIgnored] is set, except files the
//     user's repository tracks anyway, which are included as git would.
//     Executable bits and symbolic links (including dangling ones) are
//     recorded, and content is stored byte for byte: no line-ending, filter
//     or encoding conversion applies, whatever .gitattributes says.
//   - Protected paths are never stored: reins' two protection lists (the
//     secrets: .env, .env.local, .env.*, .ssh, id_rsa, id_ed25519, other
//     key and credential names, the credential stores in the home
//     directory; and the write-protected paths: .git, shell rc files,
//     .envrc, editor and agent configuration, .reins, CI workflows), or
//     the lists a host passes in [Options.Protected], the gate's own lists
//     in the gate's form (names matched anywhere, runs of names such as
//     secrets/prod.json, names with * and ?, absolute paths, paths under
//     ~; the seeds' six names always), matched by the gate's own matcher,
//     ignoring ASCII case. No
//     object, tree, index entry or file under the checkpoint store holds
//     their content, whether they are ignored or not: not by Create, not
//     by the checkpoint a restore takes first, not by a path-scoped
//     snapshot that names them (they are reported in [Checkpoint.Skipped]).
//     A restore never deletes or overwrites them: snapshots restore around
//     them. Write-protected paths are left out too, so that a rewind
//     cannot change what runs code or what an agent may do (restoring an
//     older .reins/project-profile.json would loosen the agent's
//     permissions).
//   - Each checkpoint records what it did not cover: the ignored files and
//     wholly ignored directories, nested repositories, protected,
//     oversized and special files that existed when it was taken. A
//     restore never deletes a path its target did not cover, whatever
//     changed since: .gitignore edited or deleted, a nested repository's
//     .git removed. It never overwrites a path the current state does not
//     cover either (it fails with a [*ConflictError] instead).
//   - After a restore, every covered file is exactly as snapshotted: the
//     restore writes only the files that differ, removes only the files
//     created since that the target covered, and removes the directories
//     that this leaves empty.
//   - A restore follows no symbolic link: a directory replaced by a link
//     (to inside or outside the workspace) is restored by removing the
//     link and recreating the directory; every directory above a path it
//     touches is checked to be a real directory, and all writes go through
//     an [os.Root] confined to the workspace.
//   - A restore first checkpoints the state it replaces
//     ([ReasonBeforeRestore]), so every rewind can itself be rewound.
//   - The user's HEAD, branches, index, stash and working tree (outside
//     what a restore writes) never change: no command the package runs
//     writes them. The user's index is only read, to find files the
//     repository tracks although they are ignored.
//   - Fail closed, never half-way: a restore plans everything and checks,
//     before changing anything, that every path is safe, that nothing the
//     snapshots do not cover is in the way, and that every object it needs
//     exists; otherwise it returns a [*RestoreError] (matching
//     [ErrRestoreFailed], with the [RestoreFailure] and the cause, for
//     example a [*ConflictError]) and changes nothing. If writing fails
//     midway, the workspace is returned to the checkpoint the restore took
//     first, and the error says so ([RestoreError.RolledBack]). A file
//     above the size cap fails the snapshot by default ([OversizeFail]). A
//     batch whose checkpoint cannot be taken does not run.
//
// # Path-scoped snapshots
//
// [Checkpointer.SnapshotPaths] (and [CreateOptions.Paths]) cover just the
// listed paths, for hosts that know what an action can touch: a file-edit
// tool, or a shell line the sandbox confines to a write set. A file path
// covers that file (content, executable bit, or a link); a directory path
// covers what a full snapshot covers below it (the workspace's ignore
// rules, nested repositories and protected paths apply as they do for the
// whole workspace); a path that does not exist covers its absence, and
// when its parent directory is missing too the outermost missing one is
// covered instead, so that restoring removes the directories created for
// it ([Checkpoint.Paths] says what is covered). A restore of a scoped
// checkpoint has the full guarantees for those paths and touches nothing
// outside them: an existing directory that its removals leave empty stays
// unless it is covered itself. Its safety checkpoint has the same scope.
//
// A scoped snapshot starts no process: its files are read and hashed once
// and written, with its trees, its record and its commit, as loose objects
// (the compressed files every git version reads), and its ref as a loose
// ref created with git's lock-and-rename protocol, so its cost is what the
// write set costs (below a directory path, one "git ls-files" run lists
// what the ignore rules leave). A repository whose refs or objects are not
// plain files (reftable, a compatibility object format, an extension the
// package does not know) gets the same snapshots through fast-import.
// Loose objects are rolled into a pack by the next full snapshot once
// there are about 4,096 of them, and by a scoped one above about 32,768.
//
// # Git is run safely
//
// git is always executed directly with an argument vector, never through
// a shell, with an environment built from scratch: no system or global
// configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null), no
// terminal prompts, no pager, LC_ALL=C, literal pathspecs, a fixed
// identity for the internal commits, and configuration overrides that
// switch off hooks (core.hooksPath=/dev/null), fsmonitor, commit signing
// and every setting that changes bytes or modes (autocrlf, fileMode,
// symlinks, ignoreCase). The private git directory has its own config and
// an info/attributes file that disables all conversions, so the user's
// repository configuration and attributes do not apply to snapshots or
// restores. A missing git binary is [ErrGitNotFound]; one older than
// 2.32 is [ErrGitTooOld].
//
// # Concurrency
//
// A Checkpointer is safe for concurrent use. Operations on one workspace
// are serialized: within a Checkpointer by a channel, and across
// Checkpointers and processes by flock(2) on a lock file in the private
// directory; waiting honours the context and [Options.LockTimeout]
// ([ErrLocked]). Events are delivered after the lock is released. Batch
// does not hold the lock while its function runs.
//
// # Security model and limitations
//
// Checkpoints are a recovery mechanism, not a security boundary: anything
// that can write to the workspace's .git directory (or the shadow
// repository) can delete or forge checkpoints. A restore refuses paths
// with "..", a .git component or outside the workspace, and writes through
// an [os.Root] confined to the workspace, so a forged checkpoint cannot
// write outside it or into .git. Protected paths are matched on names and
// paths, not on file identity: a hard link to a secret under an innocent
// name is stored like any file. Objects of a checkpoint stored before an
// entry was added to the protection lists stay in the object store until
// the checkpoint is pruned and git's garbage collection runs; the next
// snapshot drops the path.
//
// What a snapshot does not protect:
//   - Ignored files (by default), protected files, files above the
//     size cap under [OversizeSkip], FIFOs, sockets and devices: they are
//     neither recorded nor restored, and a restore that would overwrite one
//     fails. A file that did not exist when a checkpoint was taken and is
//     covered now (created later, not ignored) is removed by a restore to
//     it; its content is in the checkpoint the restore takes first.
//     Checkpoints written before the record of uncovered paths existed
//     (metadata version 1) are restored with today's ignore rules only.
//   - Empty directories: git records files, not directories. A restore
//     does not recreate an empty directory that was removed, and it
//     removes directories that its own deletions leave empty.
//   - Nested repositories and submodules: their content is not recorded
//     (also when files of the directory were recorded before it became a
//     repository) and a restore leaves them alone.
//   - Permission bits other than the executable bit, ownership, timestamps,
//     extended attributes and ACLs. A file that exists as a regular file
//     is rewritten in place and keeps its other bits; a file the restore
//     creates gets 0666 or 0777 minus the umask, as git checkouts do. A
//     file with more than one hard link is replaced, never written
//     through, so a link to a file outside the workspace cannot be used
//     to change that file.
//   - Files outside the workspace, and anything that is not a file
//     (databases, services, remote state) that the agent's actions change.
//   - Changes made while a snapshot or restore runs: a file written by a
//     concurrent process during the scan may be recorded in either state.
//     Do not restore while the agent is still writing.
//   - Files that the user's repository tracks although they are ignored
//     are detected from the user's index when that file changes; a file
//     force-added and edited between two checks is picked up at the next.
//   - Pruned checkpoints' objects stay in the object store until git's
//     garbage collection removes them; nothing here runs gc.
//
// # Performance
//
// Measured by the package's benchmarks on generated workspaces of 10,000
// and 50,000 files in a repository (built once per process), as ratios
// against "git status --porcelain -uall" (the floor for "what changed"
// without a file watcher), the persistent-index plumbing (a kept
// GIT_INDEX_FILE, add -A, write-tree, commit-tree, update-ref) and, for a
// first checkpoint, "git add -A" plus "git write-tree" into a fresh index,
// each paired in the same iterations on the same change of 20 modified and
// 5 new files. On a loaded 2-core machine (CPU time ratios; wall-clock ones
// vary more with the load): an incremental checkpoint costs about 1.3 to
// 1.4 status runs at 10,000 files and 1.1 at 50,000 (0.75 to 0.95
// plumbing runs); a restore, including the checkpoint of the state it
// replaces, about 1.5 to 1.7 and 1.3 to 1.4 status runs; a first
// checkpoint about 1.1 to 1.2 fresh "add -A" plus "write-tree" runs at
// 10,000 files and 0.9 at 50,000. In a repository whose attributes rule
// out the user's index, a first checkpoint reads every file and costs about
// 1.3 to 1.4 of them. Outside a repository the baseline must store every
// file too, as 10,000 loose objects, while the checkpoint writes one pack:
// a first checkpoint costs 0.05 to 0.2 of it (BenchmarkCreateOutsideRepo).
// Run "go test -run - -bench 'Create|Restore' ./checkpoint" to reproduce
// (-checkpoint.benchsmall for 10,000 files only); the benchmarks report
// wall-clock and CPU ratios.
//
// BenchmarkExecCheckpoint measures issue 22's confined line on a committed
// workspace of 1,000 files: a plain exec of "true" through os/exec against
// the same exec preceded by a checkpoint scoped to its write set (1 or 3
// files, one of them new), by a full snapshot, and by the same scoped
// checkpoint stored through fast-import, in the same iterations. On the
// shared 2-core machine it was measured on (load average 3 to 27, where
// the exec alone took 8 to 24 ms), the scoped checkpoint plus the exec
// cost 1.3 to 1.9 times the exec alone (CPU time 1.3 to 1.9), and about
// 1.5 at a load near 1; a full snapshot plus the exec cost 5 to 10 times
// as much as the scoped checkpoint plus the exec, and the scoped
// checkpoint through fast-import 3 to 5 times. Run "go test -run - -bench
// ExecCheckpoint ./checkpoint" to reproduce.
//
// The shadow repository of a workspace is keyed by its absolute path: a
// moved workspace starts a new history.
//
// # Events and the audit log
//
// [Options.OnEvent] receives an [Event] after every snapshot, restore and
// prune. The text of its [EventKind] ("checkpoint_created",
// "checkpoint_restored", "checkpoint_pruned") is the kind of the audit
// record that logs it, so a host records an event as
// audit.Kind(ev.Kind.String()), with no table of its own.
//
// # Platforms
//
// Checkpoints need git and a cross-process workspace lock. The lock uses
// flock, so on Unix systems (Linux, macOS, the BSDs) everything works;
// on other platforms (Windows) every operation that takes the lock fails
// with an error matching [errors.ErrUnsupported] instead of risking two
// interleaved restores. Where there are no inode numbers, a file's
// signature is its size and modification time alone.
package checkpoint
