package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/examples/hook/internal/hookstate"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// hook is one invocation's configuration.
type hook struct {
	c           *client
	stateDir    string
	projectFlag string
	maxActions  int
	maxFailures int
	// codexRewrite: the Codex CLI calling this hook applies updatedInput (-codex-updated-input).
	codexRewrite bool
	exe          string // this binary, for the rewritten command lines
	env          func(string) string
}

// runtime is the run of one tool call: the session's run (its state in a FileStore shared by
// the hook's processes), the audit log, and the checkpointer when a decision needs one.
type runtime struct {
	h      *hook
	k      *call
	r      *reins.Run
	log    *audit.JSONL
	files  bool // a profile file exists (else the built-in default applies)
	cp     *checkpoint.Checkpointer
	corr   uuid.UUID
	closed bool
}

// meterToolCalls counts the tool calls a session lets through, against -max-actions.
const meterToolCalls = "tool_calls"

// open starts the run of call k: the profile (from the cache when the files did not change),
// adjusted to the client's permission mode and protecting the state directory; the audit log,
// shared by every session and client; the session's run state.
func (h *hook) open(ctx context.Context, k *call) (*runtime, error) {
	p, files, err := h.profile(ctx, k.project)
	if err != nil {
		return nil, err
	}
	p = h.adjust(p, k.mode)
	log, err := h.openLog()
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %v", err)
	}
	var meters []reins.Meter
	if h.maxActions > 0 {
		meters = append(meters, reins.Meter{Name: meterToolCalls, Limit: float64(h.maxActions)})
	}
	store := reins.NewFileStore(h.sessionFile(k.session))
	r, err := reins.New(ctx, p, &reins.Options{Workspace: []string{k.project}, Audit: log, Store: store,
		MaxConsecutiveFailures: h.maxFailures, Meters: meters})
	if err != nil {
		closeLog(ctx, log)
		return nil, err
	}
	return &runtime{h: h, k: k, r: r, log: log, files: files, corr: correlation(k.c.name, k.session, k.key)}, nil
}

func (h *hook) sessionFile(session string) string {
	return filepath.Join(h.stateDir, "sessions", h.c.name+"-"+session+".json")
}

// adjust makes the profile protect the state directory (its audit log, run state, key and
// caches: neither a tool the gate decides nor a confined line may read or write it) and maps the
// client's plan mode to read-only exploration: reads go on, nothing else does. reins' own plan
// mode would deny the reads too, which is not what planning in the client means.
func (h *hook) adjust(p profile.Profile, mode string) profile.Profile {
	p = p.Clone()
	p.ProtectedPaths = append(p.ProtectedPaths, h.stateDir)
	if mode == "plan" && profile.ModeReadOnly.StricterThan(p.Mode) {
		p.Mode = profile.ModeReadOnly
	}
	return p
}

func (rt *runtime) close(ctx context.Context) {
	if rt.closed {
		return
	}
	rt.closed = true
	_ = rt.r.Close()
	closeLog(ctx, rt.log)
}

// residentLog keeps the audit log open across the calls a resident core answers (daemon.go);
// nil in a core started for one call. The log is opened Shared: every write takes its lock and
// picks up what other processes appended, as a log opened for the call would.
var residentLog *keptLog

type keptLog struct {
	path   string
	lockID string // the identity of the log's lock file when opened: another file means another log
	log    *audit.JSONL
}

// openLog opens the state directory's audit log, or returns the resident core's open one.
func (h *hook) openLog() (*audit.JSONL, error) {
	path := filepath.Join(h.stateDir, "audit.jsonl")
	k := residentLog
	if k == nil {
		return audit.OpenJSONL(path, &audit.JSONLOptions{Shared: true})
	}
	if k.log != nil && k.path == path && hookstate.Identity(path+".lock") == k.lockID {
		return k.log, nil
	}
	k.drop()
	log, err := audit.OpenJSONL(path, &audit.JSONLOptions{Shared: true})
	if err != nil {
		return nil, err
	}
	k.path, k.lockID, k.log = path, hookstate.Identity(path+".lock"), log
	return log, nil
}

// closeLog closes a log openLog opened for one call; the resident one stays open.
func closeLog(ctx context.Context, log *audit.JSONL) {
	if residentLog == nil || residentLog.log != log {
		_ = log.Close(ctx)
	}
}

// drop closes the kept log: the next call opens it again.
func (k *keptLog) drop() {
	if k.log != nil {
		_ = k.log.Close(context.Background())
		k.log = nil
	}
}

// correlation names one tool call in every record about it (decision, question, checkpoint,
// outcome), across the hook's processes.
func correlation(client, session, key string) uuid.UUID {
	sum := sha256.Sum256([]byte(client + "\x00" + session + "\x00" + key))
	var u uuid.UUID
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x80 // version 8: vendor-defined
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u
}

// pre decides the call before the tool runs and carries out the decision's obligations, or
// answers with the strictest thing it can honestly say.
func (rt *runtime) pre(ctx context.Context) (*answer, error) {
	k, r := rt.k, rt.r
	m, err := k.action()
	if err != nil {
		return nil, err
	}
	a := &m.a
	a.CorrelationID = rt.corr
	rw, wr := r.Gate().Protections()
	reach, err := expandPatterns(&m, rw, wr, homeDir())
	if err != nil {
		return nil, err
	}
	d, err := r.Check(ctx, *a)
	if err != nil && d.Verdict != policy.Deny {
		return nil, err
	}
	switch d.Verdict {
	case policy.Allow:
	case policy.Confirm:
		return rt.ask(ctx, *a, d)
	default:
		return &answer{v: vDeny, reason: rt.denial(d)}, nil
	}

	// ALLOW: every obligation is carried out here, or the call is asked about.
	if m.widen != "" {
		return rt.downgrade(ctx, *a, d, m.widen+", which reins never allows without asking")
	}
	if reach != "" {
		return rt.downgrade(ctx, *a, d, reach)
	}
	ans := &answer{v: vAllow, reason: "reins: " + d.String()}
	var conf *gate.Confinement
	if d.Obligations.Has(policy.Sandbox) {
		c, rewrite, why := rt.confine(ctx, m, d)
		if why != "" {
			return rt.downgrade(ctx, *a, d, why)
		}
		conf, ans.rewrite = c, rewrite
	}
	if d.Obligations.Has(policy.Checkpoint) {
		id, err := rt.checkpoint(ctx, *a, conf)
		if err != nil {
			return rt.downgrade(ctx, *a, d, "the checkpoint could not be taken ("+err.Error()+")")
		}
		if id != "" {
			keys := []string{k.key}
			if ans.rewrite != nil && k.c.name == "gemini" {
				// Gemini CLI's AfterTool carries the rewritten input, so the call's key there is
				// that input's.
				keys = append(keys, inputKey(k.tool, ans.rewrite))
			}
			if err := rt.remember(keys, callRecord{Checkpoint: id, Correlation: rt.corr.String()}); err != nil {
				return nil, err
			}
		}
	}
	if d.Obligations.Has(policy.Notify) {
		ans.notice = "reins: " + describe(*a) + " (" + d.Reason + ")"
	}
	if rt.h.maxActions > 0 {
		if err := r.Use(ctx, meterToolCalls, 1); err != nil {
			return &answer{v: vDeny, reason: "reins: " + err.Error()}, nil
		}
	}
	return ans, nil
}

// denial is the reason of a DENY for the client, with a hint when the built-in default profile
// refused a shell command: without a profile file the hook runs PROFILE-SAFE, which runs none.
func (rt *runtime) denial(d gate.Decision) string {
	s := "reins: " + d.String()
	if !rt.files && d.RuleID == "deny-shell" {
		s += " (no reins profile file chose a profile, so PROFILE-SAFE applies and runs no shell command: " +
			`put {"active_profile": "PROFILE-DEV"} in ` + userProfileHint() + ")"
	}
	return s
}

func userProfileHint() string {
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "reins", "profile.json")
	}
	return "the user profile file"
}

// downgrade answers a call the gate allowed whose obligations the hook cannot carry out: the
// question is recorded (parked) as a CONFIRM with the reason, and asked, where the client can ask.
func (rt *runtime) downgrade(ctx context.Context, a policy.Action, d gate.Decision, why string) (*answer, error) {
	d.Verdict = policy.Confirm
	d.Reason = why + "; so it is asked about instead of allowed (" + d.Reason + ")"
	return rt.ask(ctx, a, d)
}

// maxParked bounds the questions a session keeps waiting: a question the user declined never
// gets a tool result, so the oldest are closed as unanswered.
const maxParked = 200

// ask parks the question under the call's key, so that the tool result, if the user approves,
// records the approval; then asks, or, in a client that cannot ask, denies with the reason.
func (rt *runtime) ask(ctx context.Context, a policy.Action, d gate.Decision) (*answer, error) {
	rt.sweep(ctx)
	if _, err := rt.r.Park(ctx, rt.k.key, a, d); err != nil && !strings.Contains(err.Error(), "already parked") {
		return nil, fmt.Errorf("keeping the question: %v", err)
	}
	reason := "reins: " + d.String()
	if !rt.k.c.canAsk {
		return &answer{v: vDeny, reason: reason + " (reins would ask a human; " + rt.k.c.display +
			" cannot ask through a hook, so it is refused: choose a profile that allows it, or run it yourself)"}, nil
	}
	return &answer{v: vAsk, reason: reason}, nil
}

// sweep closes the oldest parked questions when too many wait.
func (rt *runtime) sweep(ctx context.Context) {
	s, err := rt.r.State(ctx)
	if err != nil || len(s.Parked) < maxParked {
		return
	}
	for _, p := range s.Parked[:len(s.Parked)-maxParked/2] {
		_, _ = rt.r.Resolve(ctx, p.ID, reins.Answer{Verdict: policy.Deny, By: "reins hook",
			Note: "no tool result came: the question was declined or abandoned"})
	}
}

// confine derives the line's sandbox policy and rewrites the command to run under it, in this
// binary's exec subcommand. It returns why it cannot when the client lets no hook replace the
// tool's input, no enforcing sandbox runs here, or the policy cannot be derived.
func (rt *runtime) confine(ctx context.Context, m mapped, d gate.Decision) (*gate.Confinement, map[string]any, string) {
	k := rt.k
	field := k.c.rewrites[k.tool]
	if field == "" {
		return nil, nil, k.c.display + " lets no hook run " + k.tool + " in reins' sandbox"
	}
	if k.c.rewriteOptIn && !rt.h.codexRewrite {
		return nil, nil, k.c.display + " runs " + k.tool + " unchanged unless its version applies a hook's updatedInput " +
			"(install the hook with -codex-updated-input for one that does), so reins cannot run the line in its sandbox"
	}
	if why := rt.h.sandboxAvailable(ctx, k.project); why != "" {
		return nil, nil, "no enforcing sandbox runs here (" + why + ")"
	}
	// The policy the analysis claims: decided again against the same gate with every question a
	// grant could answer answered, so that the trace holds the confinement whichever layer
	// allowed the line (the gate traces it for every allowed line). The verdict is the run's.
	var tr gate.Trace
	d2 := rt.r.Gate().Decide(&gate.State{Grants: anyGrant{}}, m.a, &tr)
	c, ok := tr.Confinement()
	if d2.Verdict != policy.Allow || !ok {
		return nil, nil, "the line's sandbox policy could not be derived"
	}
	rw, _ := rt.r.Gate().Protections()
	dir, err := filepath.Abs(m.a.WorkDir)
	if err != nil {
		return nil, nil, err.Error()
	}
	t, err := rt.h.issue(ticket{Client: k.c.name, Session: k.session, Project: k.project, Dir: dir,
		Line: lineHash(m.a.Command), Writable: c.Writable, Network: c.Network, Unknown: c.Unknown}, rw)
	if err != nil {
		return nil, nil, "the sandbox ticket could not be issued (" + err.Error() + ")"
	}
	rewrite := make(map[string]any, len(k.input))
	for key, v := range k.input {
		rewrite[key] = v
	}
	rewrite[field] = shellQuote(rt.h.exe) + " exec -state " + shellQuote(rt.h.stateDir) + " -ticket " + t + " -- bash -c " + shellQuote(m.a.Command)
	return &c, rewrite, ""
}

// anyGrant answers every question a grant could answer: see confine.
type anyGrant struct{}

func (anyGrant) MatchGrant(gate.GrantScope, policy.Subject) (string, string, bool) {
	return gate.CheckGrantPrefix + "hook-confinement", "deriving the sandbox policy", true
}

// checkpoint carries out the Checkpoint obligation before the tool runs: a snapshot of what the
// tool may change (a confined line's writable paths, a write tool's files), of the whole project
// otherwise; none for a confined line that may write nothing. It is recorded.
func (rt *runtime) checkpoint(ctx context.Context, a policy.Action, conf *gate.Confinement) (string, error) {
	var paths []string
	switch {
	case conf != nil && len(conf.Writable) == 0:
		return "", nil
	case conf != nil:
		paths = conf.Writable
	case a.Operation == policy.OpWrite || a.Operation == policy.OpDelete:
		paths = a.Targets
	}
	cp, err := rt.checkpointer(ctx)
	if err != nil {
		return "", err
	}
	label := "before " + describe(a)
	var id string
	if len(paths) > 0 {
		id, err = cp.SnapshotPaths(ctx, label, rt.corr.String(), paths)
	}
	if len(paths) == 0 || err != nil {
		// Paths a checkpoint cannot scope to (outside the project): the whole project.
		id, err = cp.Snapshot(ctx, label, rt.corr.String())
	}
	if err != nil {
		return "", err
	}
	if err := rt.r.RecordCheckpoint(ctx, checkpoint.Created, id, rt.k.project, label); err != nil {
		return "", err
	}
	return id, nil
}

// checkpointer opens the project's checkpoints (the store `reins timeline` lists) with the
// gate's protection lists, so that no checkpoint stores a secret.
func (rt *runtime) checkpointer(ctx context.Context) (*checkpoint.Checkpointer, error) {
	if rt.cp != nil {
		return rt.cp, nil
	}
	rw, wr := rt.r.Gate().Protections()
	cp, err := checkpoint.New(ctx, rt.k.project, &checkpoint.Options{Protected: &checkpoint.Protection{ReadWrite: rw, Write: wr}})
	if err != nil {
		return nil, err
	}
	rt.cp = cp
	return cp, nil
}

// post records how the tool call ended: the user's approval of a question reins asked, the
// outcome (a failure counts towards the halt), and, on a failure, the rollback to the checkpoint
// taken before it.
func (rt *runtime) post(ctx context.Context) (*answer, error) {
	k, r := rt.k, rt.r
	m, err := k.action()
	if err != nil {
		// The tool ran: record its outcome under its name even if its input is unusual.
		m = mapped{a: policy.Action{Tool: k.tool, Operation: policy.OpTool, Input: string(k.raw)}}
	}
	a := m.a
	rec, _ := rt.recall(k.key)
	if rec.Correlation != "" {
		if u, err := uuid.Parse(rec.Correlation); err == nil {
			rt.corr = u
		}
	}
	a.CorrelationID = rt.corr
	d := gate.Decision{Verdict: policy.Allow, CorrelationID: rt.corr}
	// The tool ran: if reins had asked about it, the user said yes in the client. The approval
	// covers this call: the grant Resolve makes for a retry is revoked at once, since the call
	// already ran and the user's yes in the client's dialog was for it alone.
	ap, err := r.Resolve(ctx, k.key, reins.Answer{Verdict: policy.Allow, Scope: reins.Once,
		By: k.c.display + " user", Note: "approved in " + k.c.display})
	switch {
	case err == nil:
		d.Layer = policy.LayerApproval
		if ap.Grant != "" {
			_ = r.Revoke(ctx, ap.Grant)
		}
	case !errors.Is(err, reins.ErrNotParked):
		return nil, fmt.Errorf("recording the approval: %v", err)
	}
	ans := &answer{}
	var cause error
	if k.failed {
		cause = errors.New(k.c.display + " reported a failure: " + k.failure)
		if rec.Checkpoint != "" {
			if rerr := rt.rollback(ctx, rec.Checkpoint, cause); rerr != nil {
				ans.notice = "reins: rolling back to checkpoint " + rec.Checkpoint + " failed: " + rerr.Error()
			} else {
				ans.notice = "reins: rolled back to checkpoint " + rec.Checkpoint + " after the failure"
			}
		}
	}
	rt.forget(k.key)
	if err := r.RecordResult(ctx, a, d, cause); err != nil {
		return nil, err
	}
	if h, ok := r.Halted(ctx); ok {
		ans.block = "reins halted this session: " + h.Reason + " (a human resets it: " + rt.h.exe + " reset " + k.c.name + " " + k.session + ")"
	}
	return ans, nil
}

// rollback restores the checkpoint taken before a call that failed, and records it.
func (rt *runtime) rollback(ctx context.Context, id string, cause error) error {
	cp, err := rt.checkpointer(ctx)
	if err != nil {
		return err
	}
	if err := cp.Restore(ctx, id); err != nil {
		return err
	}
	return rt.r.RecordCheckpoint(ctx, checkpoint.Restored, id, rt.k.project, "rollback after: "+cause.Error())
}

// callRecord is what a tool call's post event needs from its pre event, kept in a file of the
// session's, named after the call's key: written only when there is something to keep.
type callRecord struct {
	Checkpoint  string `json:"checkpoint,omitempty"`
	Correlation string `json:"correlation,omitempty"`
}

func (rt *runtime) callFile(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(rt.h.stateDir, "calls", rt.k.c.name+"-"+rt.k.session, fmt.Sprintf("%x.json", sum[:12]))
}

func (rt *runtime) remember(keys []string, rec callRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	for _, key := range slices.Compact(keys) {
		f := rt.callFile(key)
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			return err
		}
		if err := writeFileAtomic(f, b); err != nil {
			return err
		}
	}
	return nil
}

func (rt *runtime) recall(key string) (callRecord, error) {
	var rec callRecord
	b, err := readSmall(rt.callFile(key), 4096)
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(b, &rec)
}

func (rt *runtime) forget(key string) { _ = os.Remove(rt.callFile(key)) }

// describe says what an action does, for labels and notices.
func describe(a policy.Action) string {
	switch {
	case a.Command != "":
		return cut(a.Command, 200)
	case len(a.Targets) > 0:
		return a.Tool + " " + a.Targets[0]
	case a.Host != "":
		return a.Tool + " " + a.Host
	}
	return a.Tool
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
