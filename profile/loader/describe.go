package loader

import (
	"fmt"
	"strings"
)

// Describe returns [profile.Profile.Describe] of the effective profile followed by where its settings
// came from: every setting a file or the host set (built-in settings are not listed), the files
// read, the project's trust status, and the project settings that were not applied and why.
func (l *Loaded) Describe() string {
	var b strings.Builder
	b.WriteString(l.Profile.Describe())
	b.WriteString("files\n")
	for _, f := range l.Files {
		state := "not found"
		if f.Found {
			state = "sha256 " + f.SHA256
		}
		fmt.Fprintf(&b, "  %-13s %s (%s)\n", f.Origin, f.Path, state)
	}
	if len(l.Files) == 0 {
		b.WriteString("  none\n")
	}
	b.WriteString("set by files or the host\n")
	n := 0
	for s, src := range l.Provenance.All() {
		if src.Origin == OriginBuiltin {
			continue
		}
		n++
		fmt.Fprintf(&b, "  %s: %s\n", s, src)
	}
	if n == 0 {
		b.WriteString("  nothing\n")
	}
	fmt.Fprintf(&b, "project trust: %s", l.Trust)
	if l.TrustReason != "" {
		fmt.Fprintf(&b, " (%s)", l.TrustReason)
	}
	b.WriteString("\n")
	if len(l.Skipped) > 0 {
		fmt.Fprintf(&b, "not applied (%d)\n", len(l.Skipped))
		for _, s := range l.Skipped {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	return b.String()
}
