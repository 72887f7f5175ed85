package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

var profileCmd = &command{name: "profile", args: "<list|current|show|set>", synopsis: "list, show and switch autonomy profiles", sub: []*command{
	{name: "list", synopsis: "list the profiles; * marks the active one", run: profileList},
	{name: "current", synopsis: "show the active profile and where each setting came from", run: profileCurrent},
	{name: "show", args: "NAME", synopsis: "show a profile's settings, rules and limits", run: profileShow},
	{name: "set", args: "NAME", synopsis: "switch the user's profile (loosening asks first)", run: profileSet,
		flags: func(fs *flag.FlagSet) { fs.Bool("yes", false, "confirm a loosening switch without asking") }},
}}

var permissionsCmd = &command{name: "permissions", args: "list", synopsis: "what the active profile lets an agent do", sub: []*command{
	{name: "list", synopsis: "the permission mode, autonomy band, matrix, rules and protected paths in force", run: permissionsList},
}}

// managedUsage describes the -managed flag.
var managedUsage = "the managed profile `file`, the organisation's tier no user or project file can loosen (default " +
	managedDefault() + "; a missing file is no managed tier)"

func managedDefault() string {
	if loader.ManagedDir() == "" {
		return "none on this system"
	}
	return filepath.Join(loader.ManagedDir(), loader.DefaultManagedFile)
}

// load reads the user and project profile files for the workspace.
func (c *cli) load() (*loader.Loaded, string, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, "", err
	}
	l, err := loader.Load(c.ctx, &loader.Options{ProjectDir: ws, ManagedFile: c.managed})
	if err != nil {
		return nil, "", fmt.Errorf("%w (fix or remove the file it names)", err)
	}
	return l, ws, nil
}

// rebase returns the loaded files applied to the built-in profile name; an unknown name is not
// found.
func rebase(l *loader.Loaded, name string) (*loader.Loaded, error) {
	if _, err := profile.Builtin(name); err != nil {
		return nil, notFoundf("no profile %q: want one of %s (see 'reins profile list')", name, strings.Join(profile.Names(), ", "))
	}
	return l.Rebase(name)
}

// profileView is a profile in JSON, with the profile files' field names.
type profileView struct {
	Name           string        `json:"name"`
	Family         string        `json:"family"`
	Description    string        `json:"description"`
	Autonomy       float64       `json:"autonomy"`
	Band           string        `json:"band"`
	PermissionMode string        `json:"permission_mode"`
	Active         bool          `json:"active,omitempty"`
	Rules          []policy.Rule `json:"custom_rules,omitempty"`
	DeniedPaths    []string      `json:"denied_paths,omitempty"`
	ShellAllowlist []string      `json:"shell_allowlist,omitempty"`
	ShellBlocklist []string      `json:"shell_blocklist,omitempty"`
	AllowedTools   []string      `json:"allowed_tools,omitempty"`
	// Managed is the managed tier the profile is under, if any.
	Managed *managedView `json:"managed,omitempty"`
	// Sources says where each setting the files, the host or the managed tier set came from
	// (built-in settings are left out, unless the managed tier capped them), keyed by the
	// setting's name in the file format: "autonomy", "rules[\"org-deny-push\"]". A setting the
	// managed tier set or capped names the managed tier.
	Sources map[string]string `json:"sources,omitempty"`
}

// managedView is the managed tier in JSON.
type managedView struct {
	Source string `json:"source"`
	Caps   string `json:"caps"`
	// Bundle is the signed policy bundle's version; 0 for a managed file.
	Bundle uint64 `json:"bundle_version,omitempty"`
	// Refused says why the bundle was refused (every action is then denied).
	Refused string `json:"refused,omitempty"`
}

// managedOf returns the managed tier of l's profile, or nil.
func managedOf(l *loader.Loaded) *managedView {
	m := l.Profile.Managed
	if m == nil {
		return nil
	}
	v := &managedView{Source: m.Source, Caps: m.Caps(), Bundle: m.Bundle}
	if l.BundleRefused != nil {
		v.Refused = l.BundleRefused.Error()
	}
	return v
}

// sourcesOf returns where each setting of l that is not the built-in profile's as it is came
// from: what a file, the host or the managed tier set, or the managed tier capped.
func sourcesOf(l *loader.Loaded) map[string]string {
	out := map[string]string{}
	for s, src := range l.Provenance.All() {
		if src.Origin == loader.OriginBuiltin && src.Note == "" {
			continue
		}
		out[s.String()] = src.String()
	}
	return out
}

// loadedView is l's profile in JSON, with its managed tier and where its settings came from.
func loadedView(l *loader.Loaded, active bool) profileView {
	v := viewOf(l.Profile, active)
	v.Managed, v.Sources = managedOf(l), sourcesOf(l)
	return v
}

func viewOf(p profile.Profile, active bool) profileView {
	band := "invalid"
	if b, err := policy.BandOf(p.Autonomy); err == nil {
		band = b.String()
	}
	return profileView{Name: p.Name, Family: fmt.Sprint(p.Family), Description: p.Description, Autonomy: p.Autonomy,
		Band: band, PermissionMode: fmt.Sprint(p.Mode), Active: active, Rules: p.Rules, DeniedPaths: p.ProtectedPaths,
		ShellAllowlist: p.ShellAllowlist, ShellBlocklist: p.ShellBlocklist, AllowedTools: p.AllowedTools}
}

func profileList(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments", ""); err != nil {
		return 0, err
	}
	l, _, err := c.load()
	if err != nil {
		return 0, err
	}
	var views []profileView
	for _, p := range profile.All() {
		v := viewOf(p, p.Name == l.Profile.Name)
		v.Rules, v.DeniedPaths, v.ShellAllowlist, v.ShellBlocklist, v.AllowedTools = nil, nil, nil, nil, nil
		views = append(views, v)
	}
	return exitOK, c.emit(views, func(w io.Writer) {
		fmt.Fprintln(w, "\tNAME\tFAMILY\tBAND\tDESCRIPTION")
		for _, v := range views {
			mark := ""
			if v.Active {
				mark = "*"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", mark, v.Name, v.Family, v.Band, v.Description)
		}
	})
}

func profileCurrent(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments", ""); err != nil {
		return 0, err
	}
	l, _, err := c.load()
	if err != nil {
		return 0, err
	}
	if c.json {
		return exitOK, c.emit(loadedView(l, true), nil)
	}
	_, err = io.WriteString(c.stdout, l.Describe())
	return exitOK, err
}

func profileShow(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "a profile name", "reins profile list"); err != nil {
		return 0, err
	}
	l, _, err := c.load()
	if err != nil {
		return 0, err
	}
	p, err := rebase(l, fs.Arg(0))
	if err != nil {
		return 0, err
	}
	if c.json {
		return exitOK, c.emit(loadedView(p, p.Profile.Name == l.Profile.Name), nil)
	}
	_, err = io.WriteString(c.stdout, p.Describe())
	return exitOK, err
}

func profileSet(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "a profile name", "reins profile list"); err != nil {
		return 0, err
	}
	name := fs.Arg(0)
	l, _, err := c.load()
	if err != nil {
		return 0, err
	}
	next, err := rebase(l, name)
	if err != nil {
		return 0, err
	}
	// The spec's switching rules: tightening always, loosening only when confirmed.
	if ok, why := profile.AtLeastAsRestrictive(next.Profile, l.Profile); !ok && !fs.Lookup("yes").Value.(flag.Getter).Get().(bool) &&
		!c.confirm(fmt.Sprintf("%s is looser than %s (%s). Switch?", next.Profile.Name, l.Profile.Name, why)) {
		return 0, deniedf("not confirmed; the active profile is unchanged (pass --yes to confirm without a prompt)")
	}
	name = next.Profile.Name
	if err := editUserFile(c, func(doc map[string]any) error { doc["active_profile"] = name; return nil }); err != nil {
		return 0, err
	}
	// Under a managed tier the profile set may be capped: say what the effective settings are.
	capped := map[string]string{}
	if now, _, err := c.load(); err == nil {
		for _, field := range []string{"autonomy", "permission_mode"} {
			if src, ok := now.Provenance.Of(field, ""); ok && src.Origin == loader.OriginManaged {
				capped[field] = src.String()
			}
		}
	}
	v := struct {
		Active string            `json:"active_profile"`
		Capped map[string]string `json:"managed,omitempty"`
	}{name, capped}
	return exitOK, c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "active profile: %s\n", name)
		for _, field := range slices.Sorted(maps.Keys(capped)) {
			fmt.Fprintf(w, "%s: %s\n", field, capped[field])
		}
	})
}

// userFile returns the path of the user profile file, as the loader finds it.
func userFile() (string, error) {
	ld, err := loader.New(nil)
	if err != nil {
		return "", err
	}
	path, _ := ld.Paths()
	if path == "" {
		return "", errors.New("no user configuration directory (set $XDG_CONFIG_HOME or $HOME)")
	}
	return path, nil
}

// editUserFile changes the user profile file with edit, keeping its other settings, and loads
// the result: a change the loader refuses is undone and reported. The file is replaced
// atomically, with mode 0600 in a directory made with mode 0700.
func editUserFile(c *cli, edit func(doc map[string]any) error) error {
	path, err := userFile()
	if err != nil {
		return err
	}
	doc := map[string]any{}
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(old, &doc); err != nil {
			return fmt.Errorf("%s: %w (fix the file or remove it)", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
		old = nil
	default:
		return err
	}
	if err := edit(doc); err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, append(b, '\n')); err != nil {
		return err
	}
	if _, _, err := c.load(); err != nil {
		// Put back what was there: the edit made a file the loader refuses.
		if old == nil {
			_ = os.Remove(path)
		} else {
			_ = writeFileAtomic(path, old)
		}
		return fmt.Errorf("%s: the change was refused and undone: %w", path, err)
	}
	return nil
}

func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".profile-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// permissionsView is what the active profile lets an agent do, and where each rule came from.
type permissionsView struct {
	Profile        string            `json:"active_profile"`
	PermissionMode string            `json:"permission_mode"`
	Band           string            `json:"band"`
	Matrix         map[string]string `json:"matrix"`
	Rules          []policy.Rule     `json:"rules"`
	// RuleSources says, per rule id, which layer set the rule (built-in, user file, project file,
	// host, and any layer the loader adds above them) and where.
	RuleSources map[string]string `json:"rule_sources"`
	// Managed is the managed tier the profile is under, if any.
	Managed *managedView `json:"managed,omitempty"`
	// Sources says where every setting a file, the host or the managed tier set came from, or
	// that the managed tier capped it (profileView.Sources): the permission mode and the
	// autonomy dial, each protected path, each rule.
	Sources        map[string]string `json:"sources"`
	DeniedPaths    []string          `json:"denied_paths"`
	ShellAllowlist []string          `json:"shell_allowlist,omitempty"`
	ShellBlocklist []string          `json:"shell_blocklist,omitempty"`
}

func permissionsList(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments", ""); err != nil {
		return 0, err
	}
	l, _, err := c.load()
	if err != nil {
		return 0, err
	}
	p := l.Profile
	v := permissionsView{Profile: p.Name, PermissionMode: fmt.Sprint(p.Mode), Matrix: map[string]string{},
		Rules: p.Rules, RuleSources: map[string]string{}, Managed: managedOf(l), Sources: sourcesOf(l),
		DeniedPaths: p.ProtectedPaths, ShellAllowlist: p.ShellAllowlist, ShellBlocklist: p.ShellBlocklist}
	// from says where a setting came from when a file, the host or the managed tier set it (or
	// the managed tier capped it), for the table; "" for the built-in profile's.
	from := func(field, key string) string {
		src, ok := l.Provenance.Of(field, key)
		if !ok || src.Origin == loader.OriginBuiltin && src.Note == "" {
			return ""
		}
		return src.String()
	}
	origin := map[string]string{} // the layer alone, for the table
	for _, r := range p.Rules {
		if src, ok := l.Provenance.Of("rules", r.ID); ok {
			v.RuleSources[r.ID], origin[r.ID] = src.String(), src.Origin.String()
		}
	}
	b, err := policy.BandOf(p.Autonomy)
	if err != nil {
		return 0, err
	}
	v.Band = b.String()
	for _, lvl := range risk.Levels() {
		v.Matrix[lvl.String()] = policy.Matrix(b, lvl).String()
	}
	return exitOK, c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "profile\t%s\n", v.Profile)
		if m := v.Managed; m != nil {
			fmt.Fprintf(w, "managed tier\t%s\t%s\n", m.Source, m.Caps)
			if m.Refused != "" {
				fmt.Fprintf(w, "\t%s\t%s\n", "refused", m.Refused)
			}
		}
		fmt.Fprintf(w, "permission mode\t%s\t%s\n", v.PermissionMode, from("permission_mode", ""))
		fmt.Fprintf(w, "autonomy band\t%s\t%s\n", v.Band, from("autonomy", ""))
		fmt.Fprintf(w, "protected paths\t%s\n", strings.Join(v.DeniedPaths, " "))
		for _, d := range v.DeniedPaths {
			if src := from("denied_paths", d); src != "" {
				fmt.Fprintf(w, "  %s\t\t%s\n", d, src)
			}
		}
		fmt.Fprintln(w, "\nRISK\tWITHOUT A MATCHING RULE")
		for _, lvl := range risk.Levels() {
			fmt.Fprintf(w, "%s\t%s\n", lvl, v.Matrix[lvl.String()])
		}
		fmt.Fprintln(w, "\nPRIORITY\tRULE\tVERDICT\tFROM\tWHEN")
		for _, r := range v.Rules {
			from := origin[r.ID]
			if from == "" {
				from = "-"
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", r.Priority, r.ID, r.Action, from, when(r.Condition))
		}
	})
}

// when summarises a rule's condition in one line.
func when(c policy.Condition) string {
	var parts []string
	add := func(name string, vals []string) {
		if len(vals) > 0 {
			parts = append(parts, name+"="+strings.Join(vals, ","))
		}
	}
	add("op", strs(c.OperationType))
	add("risk", c.Risk.Names())
	add("tool", c.Tools)
	add("host", c.Hosts)
	add("command", c.Commands)
	if c.TargetPattern != "" {
		parts = append(parts, "target="+c.TargetPattern)
	}
	if c.CommandPattern != "" {
		parts = append(parts, "command~"+c.CommandPattern)
	}
	if c.OutsideWorkspace {
		parts = append(parts, "outside-workspace")
	}
	if len(parts) == 0 {
		return "always"
	}
	return strings.Join(parts, " ")
}

// strs prints each element of a slice.
func strs[T any](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprint(x)
	}
	return out
}
