package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/policy"
)

var timelineCmd = &command{name: "timeline", synopsis: "list the workspace's checkpoints, newest first (N is the first column)", run: timeline}

// A checkpoint is named the same way everywhere: its id (or a unique prefix of it), its number N
// in the timeline (1 is the newest), or --last.
const checkpointArgs = "<N>|<id>|--last"

func lastFlag(fs *flag.FlagSet) { fs.Bool("last", false, "the newest checkpoint (N = 1)") }

var rewindCmd = &command{name: "rewind", args: checkpointArgs, synopsis: "restore a checkpoint (N: the N-th newest, as 'reins timeline' numbers them); undoable",
	flags: lastFlag, run: rewind}

var diffCmd = &command{name: "diff", args: checkpointArgs, synopsis: "what changed in the workspace since a checkpoint",
	flags: lastFlag, run: diff}

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
	Changed *int      `json:"files_changed,omitempty"`
}

func timeline(c *cli, fs *flag.FlagSet) (int, error) {
	if err := exactArgs(fs, 0, "no arguments", ""); err != nil {
		return 0, err
	}
	cp, err := c.checkpointer()
	if err != nil {
		return 0, err
	}
	list, err := cp.List(c.ctx)
	if err != nil {
		return 0, err
	}
	views := make([]checkpointView, 0, len(list))
	for _, x := range list {
		views = append(views, checkpointView{ID: x.ID, Time: x.Time, Label: x.Label, Reason: x.Reason, Changed: &x.FilesChanged})
	}
	return exitOK, c.emit(views, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintln(w, "no checkpoints yet: the gate takes one before mutating work")
			return
		}
		fmt.Fprintln(w, "N\tID\tTIME\tFILES\tLABEL")
		for i, v := range views {
			fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%s\n", i+1, v.ID, v.Time.Local().Format("2006-01-02 15:04:05"), *v.Changed, v.Label)
		}
	})
}

// checkpointRef is a checkpoint as the command line names it: its position N in the timeline
// (1 is the newest) or its id.
type checkpointRef struct {
	n  int // 0 when named by id
	cp checkpoint.Checkpoint
}

func (r checkpointRef) String() string {
	if r.n > 0 {
		return fmt.Sprintf("checkpoint %d (%s)", r.n, r.cp.ID)
	}
	return "checkpoint " + r.cp.ID
}

// resolveCheckpoint reads the one argument (or --last) that names a checkpoint, the same way for
// every verb: N, an id, a unique prefix of an id, or --last.
func resolveCheckpoint(c *cli, fs *flag.FlagSet, cp *checkpoint.Checkpointer) (checkpointRef, error) {
	last := fs.Lookup("last").Value.(flag.Getter).Get().(bool)
	if last && fs.NArg() != 0 || !last && fs.NArg() != 1 {
		return checkpointRef{}, usagef("want one checkpoint: its number N (1 is the newest), its id, or --last (see 'reins timeline')")
	}
	list, err := cp.List(c.ctx)
	if err != nil {
		return checkpointRef{}, err
	}
	arg := fs.Arg(0)
	if last {
		arg = "1"
	}
	if n, err := strconv.Atoi(arg); err == nil {
		switch {
		case n < 1:
			return checkpointRef{}, usagef("checkpoint %d: numbers start at 1, the newest checkpoint (see 'reins timeline')", n)
		case len(list) == 0:
			return checkpointRef{}, notFoundf("there is no checkpoint %d: the workspace has no checkpoints yet", n)
		case n > len(list):
			return checkpointRef{}, notFoundf("there is no checkpoint %d: the workspace has %s, 1 (the newest) to %d (see 'reins timeline')",
				n, plural(len(list), "checkpoint"), len(list))
		}
		return checkpointRef{n: n, cp: list[n-1]}, nil
	}
	var found []checkpointRef
	for i, x := range list {
		if x.ID == arg {
			return checkpointRef{cp: x}, nil
		}
		if len(arg) >= 4 && strings.HasPrefix(x.ID, arg) {
			found = append(found, checkpointRef{n: i + 1, cp: x})
		}
	}
	switch len(found) {
	case 0:
		return checkpointRef{}, notFoundf("no checkpoint %q: name one by its number N or its id (see 'reins timeline')", arg)
	case 1:
		return checkpointRef{cp: found[0].cp}, nil
	}
	return checkpointRef{}, usagef("%q is the start of %d checkpoint ids: give more of it, or the number N (see 'reins timeline')", arg, len(found))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func rewind(c *cli, fs *flag.FlagSet) (int, error) {
	cp, err := c.checkpointer()
	if err != nil {
		return 0, err
	}
	ref, err := resolveCheckpoint(c, fs, cp)
	if err != nil {
		return 0, err
	}
	// By id: the checkpoint N named when it was resolved, even if one is taken meanwhile.
	res, err := cp.Rewind(c.ctx, ref.cp.ID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return 0, notFoundf("%s is gone (pruned meanwhile?): see 'reins timeline'", ref)
	}
	if err != nil {
		return 0, err
	}
	type view struct {
		Restored checkpointView `json:"restored"`
		Undo     string         `json:"undo"`
		Changes  []changeView   `json:"changes"`
	}
	v := view{Restored: checkpointView{ID: res.Restored.ID, Time: res.Restored.Time, Label: res.Restored.Label, Reason: res.Restored.Reason},
		Undo: res.Undo.ID, Changes: changeViews(res.Changes)}
	return exitOK, c.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "restored %s, %q: %s changed\n", ref, v.Restored.Label, plural(len(v.Changes), "file"))
		printChanges(w, v.Changes)
		fmt.Fprintf(w, "undo with: reins rewind %s (now checkpoint 1)\n", v.Undo)
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
	cp, err := c.checkpointer()
	if err != nil {
		return 0, err
	}
	ref, err := resolveCheckpoint(c, fs, cp)
	if err != nil {
		return 0, err
	}
	changes, err := cp.Diff(c.ctx, ref.cp.ID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return 0, notFoundf("%s is gone (pruned meanwhile?): see 'reins timeline'", ref)
	}
	if err != nil {
		return 0, err
	}
	views := changeViews(changes)
	return exitOK, c.emit(views, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintf(w, "no changes since %s\n", ref)
			return
		}
		printChanges(w, views)
	})
}

// recordRow prints an audit record as a table row.
func recordRow(w io.Writer, r audit.Record) {
	what := r.Command
	if what == "" && len(r.Targets) > 0 {
		what = strings.Join(r.Targets, " ")
	}
	if what == "" {
		what = r.Host
	}
	if what == "" && r.RequestedProfile != "" {
		what = "-> " + r.RequestedProfile
	}
	outcome := string(r.Outcome)
	if outcome == "" {
		outcome = "-"
	}
	// A record that gives no reason (a decision a grant made) says at least what decided it.
	reason := r.Reason
	if reason == "" && r.RuleMatched != "" {
		reason = "by " + r.RuleMatched
	}
	fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05"), r.Kind, r.Decision, outcome,
		r.Tool, what, reason)
}

// recordHeader heads the rows of recordRow. DECISION is the record's verdict; OUTCOME how the
// action ended, on outcome records (succeeded, failed, rolled_back, denied, parked).
const recordHeader = "SEQ\tTIME\tKIND\tDECISION\tOUTCOME\tTOOL\tTARGET\tREASON"

// logFile is the one argument of the audit verbs: a log that must exist.
func logFile(fs *flag.FlagSet) (string, error) {
	if err := exactArgs(fs, 1, "the log file", ""); err != nil {
		return "", err
	}
	return fs.Arg(0), existingFile(fs.Arg(0), "audit log")
}

func auditTail(c *cli, fs *flag.FlagSet) (int, error) {
	n := fs.Lookup("n").Value.(flag.Getter).Get().(int)
	if n < 1 {
		return 0, usagef("-n wants a positive number")
	}
	path, err := logFile(fs)
	if err != nil {
		return 0, err
	}
	var ring []audit.Record
	for r, err := range audit.Scan(path, nil) {
		if err != nil {
			return 0, err
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
	fs.String("outcome", "", "only this `outcome` (succeeded, failed, rolled_back, denied, parked)")
	fs.String("tool", "", "only this `tool`")
	fs.String("kind", "", "only this record `kind` (decision, approval, outcome, halt, checkpoint_created, ...)")
	fs.Duration("since", 0, "only records younger than this `duration` (e.g. 1h)")
}

var outcomes = []audit.Outcome{audit.OutcomeSucceeded, audit.OutcomeFailed, audit.OutcomeRolledBack, audit.OutcomeDenied, audit.OutcomeParked}

func auditQuery(c *cli, fs *flag.FlagSet) (int, error) {
	var f audit.Filter
	if s := fs.Lookup("decision").Value.String(); s != "" {
		v, err := policy.ParseVerdict(s)
		if err != nil {
			return 0, usagef("-decision: %v (want ALLOW, DENY or CONFIRM)", err)
		}
		f.Decisions = []policy.Verdict{v}
	}
	var outcome audit.Outcome
	if s := fs.Lookup("outcome").Value.String(); s != "" {
		if !slices.Contains(outcomes, audit.Outcome(s)) {
			return 0, usagef("-outcome %q: want one of %s", s, strings.Join(strs(outcomes), ", "))
		}
		outcome = audit.Outcome(s)
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
	path, err := logFile(fs)
	if err != nil {
		return 0, err
	}
	var recs []audit.Record
	for r, err := range audit.Scan(path, &f) {
		if err != nil {
			return 0, err
		}
		if outcome == "" || r.Outcome == outcome {
			recs = append(recs, r)
		}
	}
	return exitOK, c.emitRecords(recs)
}

func auditVerify(c *cli, fs *flag.FlagSet) (int, error) {
	path, err := logFile(fs)
	if err != nil {
		return 0, err
	}
	res, err := audit.Verify(path)
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
	if err != nil {
		var le *audit.LineError
		if !errors.As(err, &le) && v.Records == 0 {
			return 0, err // not a log that fails to verify: a file that cannot be read
		}
	}
	if perr := c.emit(v, func(w io.Writer) {
		if v.OK {
			fmt.Fprintf(w, "ok: %d records in %d files verify; head seq %d %s\n", v.Records, len(v.Files), v.Seq, v.Head)
		} else {
			fmt.Fprintf(w, "FAILED after %d good records: %s\n", v.Records, v.Error)
		}
	}); perr != nil {
		return 0, perr
	}
	if err != nil {
		return exitDeny, nil
	}
	return exitOK, nil
}
