package loader

import (
	"fmt"
	"strings"
	"time"
)

// Describe returns [profile.Profile.Describe] of the effective profile followed by where its settings
// came from: the managed tier (where it comes from, the bundle's version and validity, its caps),
// the files read, every setting a file, the host or the managed tier set (built-in settings are
// not listed unless the managed tier moved them), the project's trust status, and the settings
// that were not applied and why.
func (l *Loaded) Describe() string {
	var b strings.Builder
	b.WriteString(l.Profile.Describe())
	if m := l.Profile.Managed; m != nil {
		b.WriteString("managed tier\n")
		fmt.Fprintf(&b, "  %-13s %s\n", "source", m.Source)
		if bi := l.Bundle; bi != nil {
			fmt.Fprintf(&b, "  %-13s version %d, issued %s, expires %s, sha256 %s\n", "bundle", bi.Version,
				bi.Issued.UTC().Format(time.RFC3339), bi.Expires.UTC().Format(time.RFC3339), bi.Digest)
		}
		if l.BundleRefused != nil {
			fmt.Fprintf(&b, "  %-13s %v: every action is denied\n", "refused", l.BundleRefused)
		}
		fmt.Fprintf(&b, "  %-13s %s\n", "caps", m.Caps())
		fmt.Fprintf(&b, "  %-13s %d DENY or CONFIRM rules, evaluated before every other tier's; %d protected paths\n", "floor",
			len(m.Rules), len(m.ProtectedPaths)+len(m.WriteProtectedPaths))
	}
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
		if src.Origin == OriginBuiltin && src.Note == "" {
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
