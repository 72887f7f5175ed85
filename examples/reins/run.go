package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
)

var replayCmd = &command{name: "replay", args: "--profile P LOG", synopsis: "what-if: the decisions of a log that would change under another profile",
	flags: func(fs *flag.FlagSet) { fs.String("profile", "", "the `profile` to replay under (required)") }, run: replay}

var grantsCmd = &command{name: "grants", args: "<list|revoke>", synopsis: "the saved \"always allow\" grants", sub: []*command{
	{name: "list", synopsis: "list the saved grants and what each allows", run: grantsList},
	{name: "revoke", args: "ID", synopsis: "revoke a saved grant", run: grantsRevoke},
}}

func replay(c *cli, fs *flag.FlagSet) (int, error) {
	name := fs.Lookup("profile").Value.String()
	if name == "" || fs.NArg() != 1 {
		return exitError, usagef("replay wants --profile NAME and the log file (see 'reins profile list')")
	}
	l, ws, err := c.load()
	if err != nil {
		return exitError, err
	}
	p, err := l.Rebase(name)
	if err != nil {
		return exitError, fmt.Errorf("%w (see 'reins profile list')", err)
	}
	rep, err := reins.Replay(c.ctx, audit.Scan(fs.Arg(0), nil), p.Profile, &reins.ReplayOptions{Workspace: []string{ws}})
	if err != nil {
		return exitError, err
	}
	type changeView struct {
		Seq    uint64 `json:"seq"`
		Action string `json:"action"`
		Was    string `json:"was"`
		Now    string `json:"now"`
	}
	type view struct {
		Profile   string       `json:"profile"`
		Decisions int          `json:"decisions"`
		Skipped   int          `json:"skipped"`
		Changes   []changeView `json:"changes"`
	}
	v := view{Profile: p.Profile.Name, Decisions: rep.Decisions, Skipped: rep.Skipped, Changes: []changeView{}}
	for _, ch := range rep.Changes {
		v.Changes = append(v.Changes, changeView{Seq: ch.Record.Seq, Action: ch.String(), Was: ch.Was.Decision.String(), Now: ch.Now.Decision.String()})
	}
	return exitOK, c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "%d decisions replayed under %s (%d skipped: they depended on the run's state); %d would change\n",
			v.Decisions, v.Profile, v.Skipped, len(v.Changes))
		if len(v.Changes) > 0 {
			fmt.Fprintln(w, "\nSEQ\tWAS\tNOW")
			for _, ch := range rep.Changes {
				fmt.Fprintf(w, "%d\t%s\t%s\n", ch.Record.Seq, ch.Was.Decision, ch.Now.Decision)
			}
		}
	})
}

// grantStore is where "always" grants are saved: beside the user profile file.
func grantStore() (*reins.FileStore, error) {
	if p := os.Getenv("REINS_GRANTS_FILE"); p != "" {
		return reins.NewFileStore(p), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("no user configuration directory (set $XDG_CONFIG_HOME or $HOME): %w", err)
	}
	return reins.NewFileStore(filepath.Join(dir, "reins", "grants.json")), nil
}

func grantsList(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments"); err != nil {
		return exitError, err
	}
	st, err := grantStore()
	if err != nil {
		return exitError, err
	}
	state, err := st.Load(c.ctx)
	if err != nil {
		return exitError, fmt.Errorf("%w (fix or remove %s)", err, st.Path())
	}
	grants := state.Grants
	type view struct {
		ID      string    `json:"id"`
		Profile string    `json:"profile"`
		Created time.Time `json:"created"`
		Expires time.Time `json:"expires,omitzero"`
		Allows  []string  `json:"allows"`
	}
	views := []view{}
	for _, g := range grants {
		v := view{ID: g.ID, Profile: g.Profile.Name, Created: g.Created, Expires: g.Expires}
		for _, r := range g.Rules {
			v.Allows = append(v.Allows, when(r.Condition))
		}
		views = append(views, v)
	}
	return exitOK, c.emit(views, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintln(w, "no saved grants")
			return
		}
		fmt.Fprintln(w, "ID\tPROFILE\tCREATED\tALLOWS")
		for _, v := range views {
			for i, a := range v.Allows {
				if i == 0 {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", v.ID, v.Profile, v.Created.Local().Format("2006-01-02 15:04"), a)
				} else {
					fmt.Fprintf(w, "\t\t\t%s\n", a)
				}
			}
		}
	})
}

func grantsRevoke(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "a grant id (see 'reins grants list')"); err != nil {
		return exitError, err
	}
	st, err := grantStore()
	if err != nil {
		return exitError, err
	}
	id := fs.Arg(0)
	found := false
	if _, err := st.Update(c.ctx, func(s *reins.RunState) error {
		n := len(s.Grants)
		s.Grants = slices.DeleteFunc(s.Grants, func(g reins.Grant) bool { return g.ID == id })
		found = len(s.Grants) < n
		return nil
	}); err != nil {
		return exitError, err
	}
	if !found {
		return exitError, fmt.Errorf("no saved grant %q (see 'reins grants list')", id)
	}
	return exitOK, c.emit(map[string]string{"revoked": id}, func(w io.Writer) { fmt.Fprintf(w, "revoked %s\n", id) })
}
