package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/policy"
)

var timelineCmd = &command{name: "timeline", synopsis: "list the workspace's checkpoints, newest first", run: timeline}

var rewindCmd = &command{name: "rewind", args: "<id>|<n>|--last", synopsis: "restore a checkpoint (n: the n-th newest); undoable",
	flags: func(fs *flag.FlagSet) { fs.Bool("last", false, "restore the newest checkpoint") }, run: rewind}

var diffCmd = &command{name: "diff", args: "<id>", synopsis: "what changed in the workspace since a checkpoint", run: diff}

var auditCmd = &command{name: "audit", args: "<tail|query|verify> FILE", synopsis: "read and verify an audit log", sub: []*command{
	{name: "tail", args: "FILE", synopsis: "the last records of a log",
		flags: func(fs *flag.FlagSet) { fs.Int("n", 20, "how many records") }, run: auditTail},
	{name: "query", args: "FILE", synopsis: "the records that match every filter given", flags: queryFlags, run: auditQuery},
	{name: "verify", args: "FILE", synopsis: "check the log's hash chain (exit 1 if it does not verify)", run: auditVerify},
}}

func (c *cli) checkpointer() (*checkpoint.Checkpointer, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, err
	}
	return checkpoint.New(c.ctx, ws, nil)
}

// checkpointView is a checkpoint in JSON.
type checkpointView struct {
	ID      string    `json:"id"`
	Time    time.Time `json:"time"`
	Label   string    `json:"label"`
	Reason  string    `json:"reason,omitempty"`
	Changed int       `json:"files_changed"`
}

func timeline(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments"); err != nil {
		return exitError, err
	}
	cp, err := c.checkpointer()
	if err != nil {
		return exitError, err
	}
	list, err := cp.List(c.ctx)
	if err != nil {
		return exitError, err
	}
	views := make([]checkpointView, 0, len(list))
	for _, x := range list {
		views = append(views, checkpointView{ID: x.ID, Time: x.Time, Label: x.Label, Reason: x.Reason, Changed: x.FilesChanged})
	}
	return exitOK, c.emit(views, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintln(w, "no checkpoints yet: the gate takes one before mutating work")
			return
		}
		fmt.Fprintln(w, "N\tID\tTIME\tFILES\tLABEL")
		for i, v := range views {
			fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%s\n", i+1, v.ID, v.Time.Local().Format("2006-01-02 15:04:05"), v.Changed, v.Label)
		}
	})
}

func rewind(c *cli, fs *flag.FlagSet) (int, error) {
	last := fs.Lookup("last").Value.String() == "true"
	if last && fs.NArg() != 0 || !last && fs.NArg() != 1 {
		return exitError, usagef("rewind wants a checkpoint id, a number (1 is the newest) or --last (see 'reins timeline')")
	}
	cp, err := c.checkpointer()
	if err != nil {
		return exitError, err
	}
	var res checkpoint.RewindResult
	switch n, nerr := strconv.Atoi(fs.Arg(0)); {
	case last:
		res, err = cp.RewindN(c.ctx, 1)
	case nerr == nil:
		if n < 1 {
			return exitError, usagef("rewind %d: numbers start at 1, the newest checkpoint", n)
		}
		res, err = cp.RewindN(c.ctx, n)
	default:
		res, err = cp.Rewind(c.ctx, fs.Arg(0))
	}
	if err != nil {
		return exitError, fmt.Errorf("%w (see 'reins timeline' for the checkpoints)", err)
	}
	type view struct {
		Restored checkpointView `json:"restored"`
		Undo     string         `json:"undo"`
		Changes  []changeView   `json:"changes"`
	}
	v := view{Restored: checkpointView{ID: res.Restored.ID, Time: res.Restored.Time, Label: res.Restored.Label},
		Undo: res.Undo.ID, Changes: changeViews(res.Changes)}
	return exitOK, c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "restored %s (%s): %d files changed\n", v.Restored.ID, v.Restored.Label, len(v.Changes))
		printChanges(w, v.Changes)
		fmt.Fprintf(w, "undo with: reins rewind %s\n", v.Undo)
	})
}

// changeView is one changed path in JSON.
type changeView struct {
	Path string `json:"path"`
	Kind string `json:"change"`
}

func changeViews(changes []checkpoint.Change) []changeView {
	out := make([]changeView, 0, len(changes))
	for _, ch := range changes {
		out = append(out, changeView{Path: ch.Path, Kind: ch.Kind.String()})
	}
	return out
}

func printChanges(w io.Writer, changes []changeView) {
	for _, ch := range changes {
		mark := map[string]string{"added": "A", "modified": "M", "deleted": "D"}[ch.Kind]
		fmt.Fprintf(w, "  %s\t%s\n", mark, ch.Path)
	}
}

func diff(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "a checkpoint id (see 'reins timeline')"); err != nil {
		return exitError, err
	}
	cp, err := c.checkpointer()
	if err != nil {
		return exitError, err
	}
	changes, err := cp.Diff(c.ctx, fs.Arg(0))
	if err != nil {
		return exitError, fmt.Errorf("%w (see 'reins timeline' for the checkpoints)", err)
	}
	views := changeViews(changes)
	return exitOK, c.emit(views, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintln(w, "no changes since", fs.Arg(0))
			return
		}
		printChanges(w, views)
	})
}

// recordView is an audit record in a table row.
func recordRow(w io.Writer, r audit.Record) {
	what := r.Command
	if what == "" && len(r.Targets) > 0 {
		what = r.Targets[0]
	}
	if what == "" {
		what = r.Host
	}
	fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05"), r.Kind, r.Decision, r.Tool, what, r.Reason)
}

const recordHeader = "SEQ\tTIME\tKIND\tDECISION\tTOOL\tTARGET\tREASON"

func auditTail(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "the log file"); err != nil {
		return exitError, err
	}
	n, _ := strconv.Atoi(fs.Lookup("n").Value.String())
	if n < 1 {
		return exitError, usagef("audit tail -n wants a positive number")
	}
	var ring []audit.Record
	for r, err := range audit.Scan(fs.Arg(0), nil) {
		if err != nil {
			return exitError, err
		}
		if len(ring) == n {
			ring = append(ring[:0], ring[1:]...)
		}
		ring = append(ring, r)
	}
	return exitOK, c.emitRecords(ring)
}

func (c *cli) emitRecords(recs []audit.Record) error {
	if recs == nil {
		recs = []audit.Record{}
	}
	return c.emit(recs, func(w io.Writer) {
		fmt.Fprintln(w, recordHeader)
		for _, r := range recs {
			recordRow(w, r)
		}
	})
}

func queryFlags(fs *flag.FlagSet) {
	fs.String("decision", "", "only this `verdict` (ALLOW, DENY, CONFIRM)")
	fs.String("tool", "", "only this `tool`")
	fs.String("kind", "", "only this record `kind` (decision, outcome, halt, checkpoint_created, ...)")
	fs.Duration("since", 0, "only records younger than this `duration` (e.g. 1h)")
}

func auditQuery(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "the log file"); err != nil {
		return exitError, err
	}
	var f audit.Filter
	if s := fs.Lookup("decision").Value.String(); s != "" {
		v, err := policy.ParseVerdict(s)
		if err != nil {
			return exitError, usagef("audit query -decision: %v (want ALLOW, DENY or CONFIRM)", err)
		}
		f.Decisions = []policy.Verdict{v}
	}
	if s := fs.Lookup("tool").Value.String(); s != "" {
		f.Tools = []string{s}
	}
	if s := fs.Lookup("kind").Value.String(); s != "" {
		f.Kinds = []audit.Kind{audit.Kind(s)}
	}
	if d := fs.Lookup("since").Value.(flag.Getter).Get().(time.Duration); d > 0 {
		f.Since = time.Now().Add(-d)
	}
	var recs []audit.Record
	for r, err := range audit.Scan(fs.Arg(0), &f) {
		if err != nil {
			return exitError, err
		}
		recs = append(recs, r)
	}
	return exitOK, c.emitRecords(recs)
}

func auditVerify(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 1, "the log file"); err != nil {
		return exitError, err
	}
	res, err := audit.Verify(fs.Arg(0))
	type view struct {
		OK      bool     `json:"ok"`
		Records int      `json:"records"`
		Files   []string `json:"files"`
		Seq     uint64   `json:"seq"`
		Head    string   `json:"head"`
		Error   string   `json:"error,omitempty"`
	}
	v := view{OK: err == nil, Records: res.Records, Files: res.Files, Seq: res.Seq, Head: res.Head.String()}
	if err != nil {
		v.Error = err.Error()
	}
	if res.Torn != nil && err == nil {
		v.Error = "the last line is torn (a crash interrupted a write); reopening the log truncates it: " + res.Torn.Error()
	}
	if perr := c.emit(v, func(w io.Writer) {
		if v.OK {
			fmt.Fprintf(w, "ok: %d records in %d files verify; head seq %d %s\n", v.Records, len(v.Files), v.Seq, v.Head)
		} else {
			fmt.Fprintf(w, "FAILED after %d good records: %s\n", v.Records, v.Error)
		}
	}); perr != nil {
		return exitError, perr
	}
	if err != nil {
		var le *audit.LineError
		if errors.As(err, &le) || v.Records > 0 {
			return exitDeny, nil
		}
		return exitError, err
	}
	return exitOK, nil
}
