package loader

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
)

// Origin is where a setting of an effective profile comes from. Later layers take precedence:
// built-in < the organisation's defaults < user file < project file < managed tier; the host
// chooses the base profile of a switch ([Loaded.Rebase]) and adds the configuration
// directories the loader protects.
type Origin uint8

// The layers, in order of precedence.
const (
	// OriginBuiltin is the built-in profile the files apply to (the host's default, or the one a
	// file names in active_profile).
	OriginBuiltin Origin = iota
	// OriginUser is the user file, <user config dir>/reins/profile.json by default.
	OriginUser
	// OriginProject is the project file, <project>/.reins/project-profile.json by default.
	OriginProject
	// OriginHost is the host: the active profile chosen at run time ([Loaded.Rebase]), and the
	// configuration directories the loader adds to the protected paths.
	OriginHost
	// OriginManaged is the managed tier: the managed profile file
	// ([Options.ManagedFile]) or the managed profile of a signed policy bundle
	// ([Options.Bundle]). It is applied last and caps what the layers below set.
	OriginManaged
	// OriginDefaults is the organisation's defaults: the profile a signed policy bundle carries
	// besides the managed one, applied on top of the built-in profile and below the user file
	// (the built-in overrides).
	OriginDefaults
)

// String returns "built-in", "user file", "project file", "host", "managed tier" or
// "organisation defaults".
func (l Origin) String() string {
	switch l {
	case OriginBuiltin:
		return "built-in"
	case OriginUser:
		return "user file"
	case OriginProject:
		return "project file"
	case OriginHost:
		return "host"
	case OriginManaged:
		return "managed tier"
	case OriginDefaults:
		return "organisation defaults"
	}
	return fmt.Sprintf("Origin(%d)", uint8(l))
}

// Source says where one setting was set: the layer, and for a file the file's path, the JSON
// pointer of the value in it and its line.
type Source struct {
	Origin Origin
	// Profile is the built-in profile's name, for OriginBuiltin and for a switch (OriginHost).
	Profile string
	// File is the file's path, for OriginUser, OriginProject and OriginManaged (the managed
	// file, or the bundle file for a bundle's settings: OriginManaged and OriginDefaults).
	File string
	// Bundle is the version of the signed policy bundle the setting comes from; 0 for a file.
	Bundle uint64
	// Note qualifies the source: for a setting the managed tier capped, what the layers below
	// had set ("capped: the user file ... set 1").
	Note string
	// Pointer is the JSON pointer of the value in File ("/custom_rules/2").
	Pointer string
	// Line is the 1-based line of the value in File; 0 when unknown.
	Line int
}

// String describes the source for humans: `built-in profile "PROFILE-DEV"`,
// `project file /p/.reins/project-profile.json:3 /autonomy`, `host switch to "yolo"`,
// `managed tier /etc/reins/managed-profile.json:4 /managed/max_band (capped: ...)`,
// `managed tier bundle v7 /etc/reins/policy-bundle.json:2 /autonomy`.
func (s Source) String() string {
	str := s.string()
	if s.Note != "" {
		str += " (" + s.Note + ")"
	}
	return str
}

func (s Source) string() string {
	switch s.Origin {
	case OriginBuiltin:
		return fmt.Sprintf("built-in profile %q", s.Profile)
	case OriginHost:
		if s.Profile != "" {
			return fmt.Sprintf("host switch to %q", s.Profile)
		}
		return "host: protects its configuration directories"
	}
	loc := s.File
	if s.Bundle > 0 {
		loc = "bundle v" + strconv.FormatUint(s.Bundle, 10) + " " + loc
	}
	if s.Line > 0 {
		loc += ":" + strconv.Itoa(s.Line)
	}
	if s.Pointer != "" {
		loc += " " + s.Pointer
	}
	return s.Origin.String() + " " + loc
}

// Setting names one setting of an effective profile, in the vocabulary of the file format.
//
// Field is a file key: "active_profile", "autonomy", "permission_mode", "external_writes",
// "resource_limits.max_concurrent_ops", "resource_limits.max_files_per_plan",
// "resource_limits.timeout_seconds"; a list whose entries are keys: "rules" (key: the rule id,
// for built-in and custom rules alike), "denied_paths" (the profile's ProtectedPaths),
// "trusted_paths", "shell_allowlist", "shell_blocklist", "network_allowlist", "allowed_tools",
// "auto_approve_patterns" (key: the entry); or a named map entry: "host_groups.NAME" and
// "registries.NAME" (key: the host, or "" for the group itself).
type Setting struct {
	Field string
	Key   string
}

// String returns Field, or Field[Key] with the key quoted.
func (s Setting) String() string {
	if s.Key == "" {
		return s.Field
	}
	return s.Field + "[" + strconv.Quote(s.Key) + "]"
}

// Provenance records, for every setting of an effective profile, the source that set it. For
// an entry several layers add, the lowest layer that added it is recorded; for a value several
// layers set, the highest that set it. A value the managed tier set, or capped, has an
// OriginManaged source (a capped one with a Note saying what the layers below had set); so
// has every rule, protected path and list entry of the managed tier.
type Provenance struct {
	m map[Setting]Source
}

// Of returns the source of one setting: Of("autonomy", ""), Of("rules", "deny-rm"),
// Of("denied_paths", "/etc"), Of("host_groups.package-managers", "registry.example").
func (p Provenance) Of(field, key string) (Source, bool) {
	s, ok := p.m[Setting{field, key}]
	return s, ok
}

// Len returns the number of settings recorded.
func (p Provenance) Len() int { return len(p.m) }

// All yields every setting and its source, ordered by field, then key.
func (p Provenance) All() iter.Seq2[Setting, Source] {
	keys := slices.SortedFunc(maps.Keys(p.m), func(a, b Setting) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Key, b.Key))
	})
	return func(yield func(Setting, Source) bool) {
		for _, k := range keys {
			if !yield(k, p.m[k]) {
				return
			}
		}
	}
}

func (p Provenance) set(field, key string, s Source) {
	p.m[Setting{field, key}] = s
}
