package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reins-go/reins/profile/loader"
)

var trustCmd = &command{name: "trust", args: "[--yes] [--revoke]",
	synopsis: "trust the project's profile file, bound to its SHA-256, after showing what it loosens",
	flags: func(fs *flag.FlagSet) {
		fs.Bool("yes", false, "trust without asking (what it loosens is still shown)")
		fs.Bool("revoke", false, "stop trusting the project (any content of its profile file)")
	}, run: trust}

// trustView is what trust did, in JSON.
type trustView struct {
	Project string `json:"project"`
	File    string `json:"file"`
	SHA256  string `json:"sha256,omitempty"`
	// Trusted reports whether the project file is trusted now; Loosenings are the settings that
	// apply only with trust (applied when Trusted).
	Trusted    bool     `json:"trusted"`
	Loosenings []string `json:"loosenings"`
	UserFile   string   `json:"user_file"`
	Revoked    bool     `json:"revoked,omitempty"`
}

// trust records the project (the workspace) in the user file's trusted_projects with the
// SHA-256 of its profile file's content, as the loader's trust works: what the file loosens then
// applies, until the file changes. It shows what the file loosens first, from the same read of
// the file whose digest it records, and asks unless --yes.
func trust(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments (the project is the workspace: -C dir)", ""); err != nil {
		return 0, err
	}
	l, ws, err := c.load()
	if err != nil {
		return 0, err
	}
	user, err := userFile()
	if err != nil {
		return 0, err
	}
	if fs.Lookup("revoke").Value.(flag.Getter).Get().(bool) {
		return revokeTrust(c, l, ws, user)
	}
	var project loader.FileStatus
	for _, f := range l.Files {
		if f.Origin == loader.OriginProject {
			project = f
		}
	}
	if !project.Found {
		return 0, notFoundf("the project %s has no profile file (%s): there is nothing to trust", ws, project.Path)
	}
	v := trustView{Project: ws, File: project.Path, SHA256: project.SHA256, UserFile: user, Loosenings: []string{}}
	for _, s := range l.Skipped {
		v.Loosenings = append(v.Loosenings, fmt.Sprintf("%s %s: %s", location(s.Source), s.Setting, s.Reason))
	}
	if l.Trust == loader.TrustedByUser {
		v.Trusted = true
		return exitOK, c.emit(v, func(w io.Writer) {
			fmt.Fprintf(w, "already trusted: %s (SHA-256 %s), listed in %s\n", v.File, v.SHA256, v.UserFile)
		})
	}
	yes := fs.Lookup("yes").Value.(flag.Getter).Get().(bool)
	switch {
	case yes && c.json:
	case c.json:
		// Nothing is asked under --json: what trusting would apply goes to standard output, and
		// --yes confirms it.
		if err := c.emit(v, nil); err != nil {
			return 0, err
		}
		return 0, deniedf("not confirmed (under --json, pass --yes); the project is not trusted and nothing changed")
	default:
		show(c.stdout, v, l.TrustReason)
		if !yes && !c.confirm("Trust this content of "+project.Path+"?") {
			return 0, deniedf("not confirmed; the project is not trusted and nothing changed")
		}
	}
	if err := editUserFile(c, func(doc map[string]any) error {
		list, err := trustedProjects(doc, user)
		if err != nil {
			return err
		}
		list = dropProject(list, ws)
		doc["trusted_projects"] = append(list, map[string]any{"path": ws, "sha256": project.SHA256})
		return nil
	}); err != nil {
		return 0, err
	}
	after, _, err := c.load()
	if err != nil {
		return 0, err
	}
	if after.Trust != loader.TrustedByUser {
		return 0, fmt.Errorf("the project file changed after it was read (it is not the content shown, SHA-256 %s), so it is not trusted: run 'reins trust' again to see what it loosens now", project.SHA256)
	}
	v.Trusted = true
	return exitOK, c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "trusted: %s (SHA-256 %s), listed in %s; an edit of the file needs trusting again\n", v.File, v.SHA256, v.UserFile)
	})
}

// show prints what trusting the project file would change.
func show(w io.Writer, v trustView, reason string) {
	fmt.Fprintf(w, "project file %s\nSHA-256 %s\n%s\n", v.File, v.SHA256, reason)
	if len(v.Loosenings) == 0 {
		fmt.Fprintln(w, "It loosens nothing: trusting it changes no decision now (an edit will need trusting again).")
		return
	}
	fmt.Fprintf(w, "Trusting it applies what it loosens, which is left out now (%d settings):\n", len(v.Loosenings))
	for _, s := range v.Loosenings {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

// location is where a setting is in its file: FILE:LINE POINTER.
func location(s loader.Source) string {
	at := s.File
	if s.Line > 0 {
		at += fmt.Sprintf(":%d", s.Line)
	}
	return at + " " + s.Pointer
}

func revokeTrust(c *cli, l *loader.Loaded, ws, user string) (int, error) {
	removed := false
	if err := editUserFile(c, func(doc map[string]any) error {
		list, err := trustedProjects(doc, user)
		if err != nil {
			return err
		}
		kept := dropProject(list, ws)
		removed = len(kept) < len(list)
		if !removed {
			return notFoundf("%s does not trust the project %s (it is not in trusted_projects)", user, ws)
		}
		if len(kept) == 0 {
			delete(doc, "trusted_projects")
		} else {
			doc["trusted_projects"] = kept
		}
		return nil
	}); err != nil {
		return 0, err
	}
	v := trustView{Project: ws, UserFile: user, Revoked: true, Loosenings: []string{}}
	for _, f := range l.Files {
		if f.Origin == loader.OriginProject {
			v.File, v.SHA256 = f.Path, f.SHA256
		}
	}
	return exitOK, c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "revoked: %s no longer trusts the project %s; what its profile file loosens is left out\n", user, ws)
	})
}

// trustedProjects returns the user file's trusted_projects entries.
func trustedProjects(doc map[string]any, user string) ([]any, error) {
	raw, ok := doc["trusted_projects"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: trusted_projects is not a list (fix the file)", user)
	}
	return list, nil
}

// dropProject returns the entries of list that name another project than dir (compared as the
// loader compares them: absolute, ~/ expanded, symbolic links resolved).
func dropProject(list []any, dir string) []any {
	want := canonical(dir)
	var kept []any
	for _, e := range list {
		m, ok := e.(map[string]any)
		p, _ := m["path"].(string)
		if ok && p != "" && canonical(expandHome(p)) == want {
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

func canonical(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}
