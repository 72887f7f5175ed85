// Package loader reads reins profile files: the user file and the project file, validated
// against a JSON Schema, applied in that order on top of a built-in [profile.Profile], with the
// provenance of every setting and the project's trust.
//
// In the decision flow it runs before the gate: a host loads the effective profile once (and
// again to reload, [Loader.Watch]) and hands [Loaded.Profile] to the gate, which compiles it. The
// profile model, the built-in profiles and their order live in package profile; this package
// holds everything that reads files (the JSON and YAML decoders, the schema), so a host that
// uses only built-in profiles does not link them.
//
// # Files
//
// A host loads the profile from files with [Load] (or a [Loader], to reload): a user file and a
// project file, each optional, applied in that order on top of a built-in profile. The result,
// a [Loaded], holds the effective [profile.Profile] (which compiles), its [Provenance] (for every
// setting, the layer, file, JSON pointer and line that set it), the project settings that were
// [Skipped] for lack of trust, and [Loaded.Describe] for display.
//
// Format. A profile file is a JSON object (a file named *.yaml or *.yml is read as YAML and
// converted to the same JSON value), validated against the JSON Schema (draft 2020-12) in
// profile.schema.json, which is embedded ([Schema]) and published in the repository ([SchemaID]
// may be named in "$schema" for editors). Every key is optional:
//
//	active_profile         a built-in profile name (any of Names); the file's settings apply on
//	                       top of it. Default: Options.Default, which is PROFILE-SAFE.
//	autonomy               the dial, 0 to 1.
//	permission_mode        default, read-only, plan, emergency-stop; or supervised, trusted,
//	                       autonomous, which set the mode to default and put the dial in that band
//	                       (at 0, 0.5 or 1 unless the dial already lies in the band). If the same
//	                       file gives autonomy too, it must lie in the band.
//	external_writes        halt or policy (see ExternalWrites).
//	custom_rules           policy rules (policy.Rule's JSON: id, priority, condition, action,
//	                       reason, obligations).
//	shell_allowlist, shell_blocklist, network_allowlist, denied_paths (the read-and-write
//	protected paths), write_protected_paths, trusted_paths, allowed_tools, auto_approve_patterns
//	                       entries added to the profile's lists.
//	unprotected_paths      entries removed from denied_paths and write_protected_paths (a
//	                       loosening; the seeds' .git, .env, .env.local, .ssh, id_rsa and
//	                       id_ed25519 cannot be removed).
//	host_groups            group name to host globs, added to the group of that name.
//	registries             package ecosystem to registry hosts (literal names).
//	resource_limits        max_concurrent_ops, max_files_per_plan, timeout_seconds; each optional.
//	trusted_projects       user file only: [{path, sha256}], see Trust below.
//	approval               the approval-mode seed's block: mode (ask, safe, auto, yolo) selects
//	                       that built-in profile; trusted_paths, denied_paths, allowed_tools and
//	                       auto_approve_patterns are added like the top-level lists.
//	$schema, $comment      ignored (also $comment inside a rule).
//
// Beyond the seeds' keys, reins adds external_writes, registries, the $schema and $comment
// keys, and a file may select its profile through approval.mode instead of active_profile (not
// both). Unknown keys, wrong types, out-of-range values, invalid globs (checked with the rule
// compiler's doublestar rules), invalid RE2 regular expressions, command entries that name no
// command, protected paths that are patterns (a name may hold * and ?, nothing else), relative
// trusted paths, duplicate keys and duplicate rule ids are load errors: each a [*Error]
// with the file, the JSON pointer, the line (and column, for syntax errors) and the reason; all
// of them are reported, joined ([Errors]), up to 100 per file (then one more says there were
// more). Nothing is applied from a load that fails, so a host that reloads keeps its previous
// profile.
//
// Limits. A profile file comes from a repository that may be hostile, so what it may cost is
// bounded, not only its size; each limit is a load error naming the file:
//
//	file size              1 MiB (1,048,576 bytes), checked before reading
//	nesting                32 levels of objects and arrays
//	values                 200,000, counted after YAML aliases are expanded (an alias counts
//	                       each time it is used)
//	expanded size          1 MiB: a YAML file may not stand for more than a JSON file could hold,
//	                       counted as the JSON value it converts to (each scalar and key by its
//	                       length, with a few bytes of punctuation), again each use of an alias
//	                       counting. Without this bound a 34 KB file of 10,000 uses of one alias
//	                       to a 4,000-byte string, within every other limit, stands for 40 MB.
//	key length             1,024 bytes (the longest key a profile file uses is 64)
//	lists and objects      as the schema says (10,000 entries for most lists)
//	problems reported      100 per file
//
// The load's context is looked at while reading, every 1,024 values while decoding, between
// pieces of the schema validation (an array of more than 256 values is validated in chunks,
// apart from the value that holds it), every 1,024 entries of the checks, and before every
// comparison of the merge; when it is done the load stops with an error that wraps the
// context's error ([*Error] naming the file while a file is processed).
//
// Locations. The user file is <user config dir>/reins/profile.json and the project file
// <project>/.reins/project-profile.json; [Options] changes every part (a host may keep the
// policy spec's .exacta names), and [Loader.Paths] says where they are looked for. A missing
// file is an empty layer; an unreadable one, or one larger than 1 MiB, is an error. Every
// profile the loader returns protects the user directory and the project configuration
// directory it reads from (provenance [OriginHost]), whatever their names.
//
// Reading. A project file comes with a cloned repository, so every reader of profile files
// ([Loader.Load], [Loader.Watch] and [TrustDigest]) reads the same careful way: symbolic links
// are followed (a configuration directory may be a link), but the file must be a regular file
// of at most 1 MiB, which is checked before it is opened and again on the opened file; it is
// opened without blocking (O_NONBLOCK on Unix), read with a bound, and the context is looked at
// between reads. A named pipe, a device such as /dev/zero, a directory, a sparse file that
// claims gigabytes and a dangling symbolic link (the file's, or a directory's on the way to it)
// are each an [*Error] that names the file and the reason, returned at once, without reading.
//
// Precedence. built-in < user file < project file. The base profile is the highest layer's
// active_profile; then the user file's settings apply, then the project file's. A value (the
// dial, the mode, a limit) is the last layer's that set it; list entries, host-group hosts and
// registry hosts accumulate over the layers, so the denied paths and blocklists of every layer
// apply and no layer can remove a restriction of a lower one. Custom rules merge with the
// profile's rules by priority (lower first); at equal priority a file's new rules come before
// the rules of lower layers, in file order. A rule with the id of an existing rule replaces it in
// place. A rule may refer (@name) to the profile lists and to host groups of its own or a lower
// layer. [Loaded.Rebase] applies the same files to another built-in profile, for a profile
// switch: the files' denied paths, groups and rules stay in force whichever profile is active.
//
// Trust. The user file is the user's own configuration and applies in full. A project file
// comes with a repository that may not be the user's, so it may tighten anything, but what it
// loosens applies only when the project is trusted: when the user file lists the project
// directory in trusted_projects with the SHA-256 of the project file's content (the hex digest
// sha256sum prints), or when the host's [ConfirmFunc] approves that content. The trust is bound to
// the content: an edited project file must be trusted or confirmed again.
//
// Loosening has one definition, [profile.AtLeastAsRestrictive], the order profile switching
// uses too. The project file's settings are applied one by one, in file order (scalars, then
// lists, then rules, then host-group and registry hosts), each to the profile so far; a setting
// whose result is not at least as restrictive as the profile before it is left out. The entries
// a file adds to one list are judged together first, and one by one only when together they
// loosen (the first 256 of them; the rest are left out with the reason of the whole). An
// active_profile switch replaces the base profile's rules and lists wholesale, so it is judged
// with the user file applied to both built-in profiles. The order being transitive, the
// effective profile is then at least as restrictive as without the project file, and the load
// checks that as a whole: if it did not hold, the whole project file would be left out and
// reported as one skipped setting. So a project file without trust may lower a limit, add denied
// paths, blocklist entries only DENY rules use, DENY rules, a stricter permission mode, a dial in
// a band whose matrix keeps the obligations, or a switch to a profile that is at least as
// restrictive with the user file applied; it may not raise the dial, a resource limit or the
// permission mode, leave external writes to the rules, stop exec checkpoints, add a trusted path
// or change registry hosts; and its hosts, allow-side list entries and ALLOW or CONFIRM rules
// apply only where they provably let nothing more through (an entry in a list no rule refers to
// changes no decision). The order's documentation says how decisions are compared (a CONFIRM
// stands in for notify and sandbox, never for a checkpoint) and how rules are proven harmless.
//
// Without trust the loosening settings are left out, each reported in [Loaded.Skipped] with its
// pointer and reason, [Loaded.Trust] and [Loaded.TrustReason] say why, and the rest applies. A
// [Loader] remembers the contents its callback approved, so reloading an unchanged file does not
// ask again.
//
// # Security model and limitations
//
// Trust decisions are made setting by setting against the layers below, with the same order as
// profile switching, and conservatively: a setting the order cannot prove harmless needs trust
// even when it is. The loader reads each file once and hashes the bytes it parsed, so a file
// swapped between the read and the hash cannot be trusted by mistake; it cannot stop an agent
// from editing the files themselves, which is why every loaded profile protects the directories
// the files are read from (and the gate protects its own configuration directory). A trusted
// project file may loosen anything the user file could, including selecting yolo: trust a
// project only as far as its authors.
package loader
