// Package loader reads reins profile files: the user file and the project file, validated
// against a JSON Schema, applied in that order on top of a built-in [profile.Profile], then an
// organisation's managed tier (a managed file, or a signed policy bundle) that nothing below it
// can loosen, with the provenance of every setting and the project's trust.
//
// In the decision flow it runs before the gate: a host loads the effective profile once (and
// again to reload, [Loader.Watch]) and hands [Loaded.Profile] to the run (reins.New, Run.Reload),
// which compiles it and keeps its managed tier in force through every switch. The
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
//	managed                managed tier only: {max_band, max_permission_mode,
//	                       managed_rules_only}, see Managed tier below.
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
// Precedence. built-in < user file < project file (< managed tier, see below). The base profile is the highest layer's
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
// # Managed tier
//
// An organisation's administrator sets a floor no user file, project file, profile switch or
// grant may go below: the managed tier, read from the managed file or from a signed policy
// bundle (see Signed policy bundles). It is the managed-settings tier of the agent CLIs (Claude
// Code's managed-settings.json, Gemini CLI's system settings, Codex CLI's requirements.toml).
//
// Location. The managed file is [ManagedDir]/managed-profile.json unless [Options.ManagedFile]
// names another: /etc/reins on Linux and other Unix systems, /Library/Application Support/reins
// on macOS, %ProgramData%\reins on Windows. A missing file is no managed tier;
// [Options.NoManagedFile] leaves it out. On Unix the file, and every directory above it, must
// belong to root or to the user running the host and be writable by nobody else (a sticky
// directory of root's, such as /tmp, aside): a managed file another local user could have
// written is a load error, since it would set the settings of everyone who loads it. Every
// profile loaded under a managed tier protects the managed file's directory (provenance
// [OriginHost]).
//
// Format. A profile file (JSON or YAML), with one more key only it may hold:
//
//	managed.max_band             supervised, trusted or autonomous: the highest autonomy band
//	managed.max_permission_mode  default, read-only, plan or emergency-stop: the least
//	                             restrictive mode (emergency-stop < plan < read-only < default)
//	managed.managed_rules_only   true: the user's and the project's ALLOW rules and the grants
//	                             are forbidden
//
// Its own autonomy and permission_mode must lie within its caps, and it may not list
// trusted_projects (load errors otherwise).
//
// Precedence. The managed tier is applied last: a value it sets (the dial, the mode, a limit,
// external writes, exec checkpoints, the active profile) is the value, whatever the user or
// project file set; its list entries, host groups, registries and ALLOW rules are added as any
// layer's. Then:
//
//   - Caps. A dial above max_band, set by any layer below (or the base profile, or a host's
//     [Loaded.Rebase]), is lowered to that band's dial (0.0, 0.5, 1.0); a mode less restrictive
//     than max_permission_mode is replaced by it. Provenance names the cap ([OriginManaged],
//     pointer /managed/max_band) with a note saying what was set and by whom.
//   - Floor. Its DENY and CONFIRM rules and its protected paths always apply: they become the
//     profile's [profile.Managed], imposed by [profile.Managed.Impose]. A user or project rule
//     with the id of one of them is dropped ([Skipped], Managed true); its DENY rules are
//     evaluated before every other rule, its CONFIRM rules before every other tier's ALLOW and
//     CONFIRM rules (the DENY rules they must not turn into questions are moved ahead of them,
//     with the exceptions those DENY rules have that a managed CONFIRM rule covers raised to
//     CONFIRM: provenance notes each rule moved); its protected paths are added after the
//     layers below, so no unprotected_paths removes them. The limit is stated in
//     [profile.Managed.Impose]: a DENY rule after an exception no managed CONFIRM rule covers,
//     and the autonomy matrix's denial of destructive actions in the supervised band, are
//     asked rather than denied where a managed CONFIRM rule matches.
//   - Managed rules only. The user's and the project's ALLOW rules are dropped, and every other
//     setting of theirs applies only where it keeps the profile at least as restrictive (the
//     project's trust does not change that), each dropped setting in [Skipped] with Managed
//     true; the result is checked as a whole against the managed tier on its own, and the two
//     files are left out if it were looser. A run under such a tier makes and applies no
//     grants.
//
// The profile carries the tier ([profile.Profile.Managed]): the run takes it from there, so a
// switch keeps it, a switch past its caps is refused, and a grant never answers a question one
// of its CONFIRM rules asks (see package reins). [Loaded.Describe] shows the tier (its source,
// bundle, caps and floor) and, for every setting, whether the managed tier set or capped it.
//
// # Signed policy bundles
//
// Instead of a managed file, [Options.Bundle] takes the managed tier from a signed policy bundle
// ([BundleOptions]): one file an organisation distributes, that is verified before anything in it
// is used.
//
// Format. A JSON object, every key required but defaults, no other key, none twice:
//
//	format      "reins-policy-bundle/v1"
//	version     the version counter: an integer from 1, raised for every new bundle
//	issued_at   RFC 3339 time in whole seconds; refused while more than 5 minutes ahead
//	expires_at  RFC 3339 time in whole seconds, after issued_at; refused from then on
//	managed     base64 of the managed profile (a managed file's JSON content)
//	defaults    optional: base64 of the organisation's defaults, a profile file's JSON content
//	            applied on top of the built-in profile and below the user file (the built-in
//	            overrides; provenance [OriginDefaults])
//	signature   base64 of the Ed25519 signature of the canonical encoding: the format string and
//	            a newline, the version (8 bytes), issued_at and expires_at in Unix seconds (8
//	            bytes each), then the managed and the defaults profile each as its length (4
//	            bytes) and its bytes, integers big-endian
//
// [SignBundle] writes one; [VerifyBundle] checks one. The envelope is at most 1 MiB.
//
// Key pinning. The host pins the organisation's Ed25519 public keys in [BundleOptions.Keys]
// (two while rotating); a bundle signed with any other key, or changed after it was signed, is
// refused. Nothing else about the bundle file is trusted: it may lie anywhere and be delivered
// any way.
//
// Versions. A bundle older than the one in use is a replay and is refused: the version must be
// at least the newest one used, and a bundle with the same version must be the same bundle. The
// newest version used (and its digest) is kept in a [VersionStore]: by default a
// [FileVersionStore] at <user directory>/policy-bundle.seen.json, beside the user file (the user
// directory every loaded profile protects from the agent), so a replay across restarts is
// caught; a host that must hold against the local user too gives a store only the administrator
// can write (or its shared run state). A Loader also remembers the newest version it used. A run
// refuses a Reload to an older bundle's tier that is looser than the active profile.
//
// Refusal. A bundle that is missing, malformed, fails verification, is a replay, is not yet
// issued or has expired, or whose profiles do not load, is refused with a [*BundleError]
// ([ErrBundleRefused]) that names the file, the version when the signature verified, and the
// reason. Nothing of it is applied. What follows is the host's setting, [BundleOptions.OnRefusal]:
// [KeepLast] (the default) returns the error, so a host keeps the profile it has and the run
// stays on it (at start, with nothing to keep, it cannot start); [DenyAll] returns a profile that
// denies everything (mode emergency-stop, capped there by its managed tier, grants forbidden),
// with the refusal in [Loaded.BundleRefused], which the host reloads. [Loader.Watch] also reloads
// when the bundle in use expires. The run names the bundle version of its tier in every audit
// record.
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
//
// The managed tier holds against the user's and the project's files, profile switches and
// grants; it holds against the local user only as far as the managed file (or the bundle's
// version store) is out of that user's reach. On Windows the loader does not read access control
// lists: %ProgramData% lets every user create directories, so an administrator creates
// %ProgramData%\reins and restricts it. A bundle's signature proves who wrote it, not that it is
// the newest: replays are caught only against the version store.
package loader
