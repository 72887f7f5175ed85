//go:build linux

package shell_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/risk/shell"
)

// The tracer proofs: every line the option tables let the analysis call read-only (or a
// writer of named paths) is run for real, under strace, in a throwaway fixture, and what it did
// is held to what the analysis claimed (proof_check_test.go says exactly how). See the package
// documentation's "Proofs" section for how to add a program, and proofKnown for the lines the
// proofs currently reject.

// proofFullEnv makes TestProof run every spelling, value and context of every option.
const proofFullEnv = "REINS_PROOF_FULL"

// proofHarness holds what every run shares: the tools, the fixture template, the programs
// installed.
type proofHarness struct {
	tools    proofTools
	tpl      *proofTemplate
	parent   string // where the runs' fixtures go
	builtins map[string]bool
	known    map[string]bool // programs the analysis knows (shell.ProofPrograms)
	mu       sync.Mutex
	found    map[string]bool // program -> installed
}

func newProofHarness(tb testing.TB, dir string) *proofHarness {
	tb.Helper()
	tools := requireProofTools(tb)
	h := &proofHarness{tools: tools, tpl: newProofTemplate(tb, dir), parent: proofRunsDir,
		builtins: map[string]bool{}, known: map[string]bool{}, found: map[string]bool{}}
	out, err := exec.Command(tools.bash, "-c", "compgen -b; compgen -k").Output()
	require.NoError(tb, err)
	for _, b := range strings.Fields(string(out)) {
		h.builtins[b] = true
	}
	for _, p := range shell.ProofPrograms() {
		h.known[p] = true
	}
	return h
}

// installed reports whether the program runs here: a bash builtin or keyword, or in PATH.
func (h *proofHarness) installed(name string) bool {
	if h.builtins[name] {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ok, seen := h.found[name]
	if !seen {
		for _, dir := range strings.Split(proofPath(), ":") {
			if fi, err := os.Stat(dir + "/" + name); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				ok = true
				break
			}
		}
		h.found[name] = ok
	}
	return ok
}

// proofResult is the outcome of one row.
type proofResult struct {
	Row        proofRow
	Skipped    string   // why the line was not run: its claim is not bounded
	Missing    []string // programs it needs that are not installed
	Unproven   []string // programs it names that proofUnpackaged or proofNotInCI list, with why
	Findings   []proofFinding
	Programs   []string // the programs the line names
	Output     string
	TimedOut   bool
	Unfinished bool          // strace had not finished every process's trace (see errUnfinished)
	CPU        time.Duration // the run's processes' CPU time
	Err        error
}

// prove analyses and runs one line.
func (h *proofHarness) prove(ctx context.Context, row proofRow) proofResult {
	res := proofResult{Row: row}
	fx, err := reserveFixture(h.parent)
	if err != nil {
		res.Err = err
		return res
	}
	defer os.RemoveAll(fx.run)
	an, _ := shell.Analyze(row.Line, &shell.Options{Dir: fx.ws, Home: fx.home, TempDir: fx.tmp})
	if why := unbounded(an, fx); why != "" {
		res.Skipped = why
		return res
	}
	for _, c := range an.Commands {
		p := c.Program
		if p == "" || strings.Contains(p, "/") || slices.Contains(res.Programs, p) {
			continue
		}
		res.Programs = append(res.Programs, p)
		if why := unprovable(p); why != "" {
			res.Unproven = append(res.Unproven, p+": "+why)
			continue
		}
		if h.known[p] && !h.installed(p) {
			res.Missing = append(res.Missing, p)
		}
	}
	if len(res.Missing) > 0 || len(res.Unproven) > 0 {
		return res
	}
	run := traceLine(ctx, h.tools, h.tpl, fx, row.Line)
	if run.Err != nil {
		// Once more, in a fresh run directory: a loaded machine can starve one run.
		_ = os.RemoveAll(fx.run)
		if fx, err = reserveFixture(h.parent); err != nil {
			res.Err = err
			return res
		}
		defer os.RemoveAll(fx.run)
		if an, _ = shell.Analyze(row.Line, &shell.Options{Dir: fx.ws, Home: fx.home, TempDir: fx.tmp}); unbounded(an, fx) != "" {
			res.Err = fmt.Errorf("the claim changed with the fixture's path: %v", run.Err)
			return res
		}
		run = traceLine(ctx, h.tools, h.tpl, fx, row.Line)
	}
	res.Output, res.TimedOut, res.Unfinished, res.CPU, res.Err = run.Output, run.TimedOut, run.Unfinished, run.CPU, run.Err
	if run.Err != nil {
		return res
	}
	sec, err := newProofSecrets(fx)
	if err != nil {
		res.Err = err
		return res
	}
	res.Findings = newClaim(an, fx).check(fx, sec, run.Events)
	return res
}

// proveAll runs rows on twice as many workers as there are processors: a run mostly waits on
// strace and its children, and a line that follows a file waits for its deadline.
func (h *proofHarness) proveAll(ctx context.Context, rows []proofRow) []proofResult {
	out := make([]proofResult, len(rows))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 2*runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i] = h.prove(ctx, rows[i])
			}
		}()
	}
	for i := range rows {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// TestProof runs every row of the option tables, find's primaries, every program the analysis
// knows and the lines of internal/shelltables under the tracer, and fails on any effect outside
// the analysis's claim that proofKnown does not list, and on any listed line that no longer
// shows its effect (the list is the to-do of the fixes: it must not go stale).
func TestProof(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TestProof runs every table row under strace (minutes); the main test pass runs it")
	}
	if raceEnabled {
		t.Skip("the race detector is on: TestProof's work is in the programs it traces, not in Go code; the main test pass runs it")
	}
	h := newProofHarness(t, t.TempDir())
	full := os.Getenv(proofFullEnv) == "1"
	var rows []proofRow
	rows = append(rows, tableRows(full)...)
	rows = append(rows, findRows(full)...)
	rows = append(rows, programRows()...)
	rows = append(rows, shelltablesRows()...)
	rows = dedupeRows(rows)
	if only := os.Getenv("REINS_PROOF_ONLY"); only != "" {
		// A file of lines, one a line: run those rows alone (to iterate on a table's fixes).
		b, err := os.ReadFile(only)
		require.NoError(t, err)
		want := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			want[l] = true
		}
		rows = slices.DeleteFunc(rows, func(r proofRow) bool { return !want[r.Line] })
		full = true // not every row ran: proofKnown is not checked for stale entries
	}
	if proofSample > 1 {
		// Under the race detector the proofs run again for nothing: the runs are other
		// processes. Every proofSample-th row keeps the harness itself checked.
		var sample []proofRow
		for i, r := range rows {
			if i%proofSample == 0 {
				sample = append(sample, r)
			}
		}
		rows = sample
	}
	start, cpu0 := time.Now(), h.tools.pool.cpu()
	results := h.proveAll(context.Background(), rows)
	reportProof(t, results, !full && proofSample == 1)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	t.Logf("%d rows in %v; processor time: servers, strace and runs %v, this test process %v",
		len(rows), time.Since(start).Round(time.Second), (h.tools.pool.cpu() - cpu0).Round(time.Second), self.Round(time.Second))
}

// dedupeRows drops repeated lines (tables shared by several entries make some twice).
func dedupeRows(rows []proofRow) []proofRow {
	seen := map[string]bool{}
	out := rows[:0]
	for _, r := range rows {
		if !seen[r.Line] {
			seen[r.Line] = true
			out = append(out, r)
		}
	}
	return out
}

// reportProof fails t for every finding proofKnown does not list and, when complete (every
// CI row ran), for every entry of proofKnown that no run showed. It writes the entries of every
// failing row to the file $REINS_PROOF_KNOWN_OUT when set (a start for the list).
func reportProof(t *testing.T, results []proofResult, complete bool) {
	t.Helper()
	known := proofKnownIndex()
	missing := map[string][]string{}
	ran, skipped, failed, timeouts, unfinished := 0, 0, 0, 0, 0
	unproven := map[string]int{} // program: why -> rows
	seen := map[string]bool{}    // "line\x00key" and "program\x00key" of the listed findings shown
	cut := map[string]bool{}     // lines and programs with a run the deadline or strace cut short
	var literals []string
	for _, r := range results {
		switch {
		case r.Err != nil:
			t.Errorf("%s: %q: the harness failed: %v", r.Row.Entry, r.Row.Line, r.Err)
			continue
		case len(r.Missing) > 0:
			for _, m := range r.Missing {
				missing[m] = append(missing[m], r.Row.Line)
			}
			continue
		case len(r.Unproven) > 0:
			for _, u := range r.Unproven {
				unproven[u]++
			}
			continue
		case r.Skipped != "":
			skipped++
			continue
		}
		ran++
		if r.TimedOut {
			timeouts++
		}
		if r.Unfinished {
			unfinished++
		}
		if r.TimedOut || r.Unfinished {
			cut[r.Row.Line] = true
			for _, p := range r.Programs {
				cut[p] = true
			}
		}
		var unknown []proofFinding
		for _, f := range r.Findings {
			if e := matchKey(known.lines[r.Row.Line], f.Key); e != "" {
				seen[r.Row.Line+"\x00"+e] = true
				continue
			}
			if p, e := knownProgram(known, r, f); p != "" {
				seen[p+"\x00"+e] = true
				continue
			}
			unknown = append(unknown, f)
		}
		if len(r.Findings) > 0 {
			failed++
			literals = append(literals, knownLiteral(r))
		}
		if len(unknown) > 0 {
			t.Errorf("%s: %q does what the analysis does not claim (programs %v%s):\n\t%s\n\tlist it in proofKnown only until the table is fixed:\n\t%s",
				r.Row.Entry, r.Row.Line, r.Programs, timedOut(r.TimedOut), strings.Join(findingStrings(unknown), "\n\t"), knownLiteral(r))
		}
	}
	if complete {
		// The unproven lists must name programs the analysis knows.
		handled := map[string]bool{}
		for _, p := range shell.ProofPrograms() {
			handled[p] = true
		}
		for _, list := range []map[string]string{proofUnpackaged, proofNotInCI} {
			for p := range list {
				if !handled[p] {
					t.Errorf("%s is listed as unproven but the analysis has no handler for it: remove it from the list", p)
				}
			}
		}
		for _, k := range proofKnown {
			key := k.Line
			if key == "" {
				key = k.Program
			}
			// An entry is stale when no run shows any of its findings (one finding may come
			// and go with timing: a program killed at the deadline).
			shown := known.fuzz[k.Line]
			for _, f := range k.Findings {
				shown = shown || seen[key+"\x00"+f]
			}
			if !shown && cut[key] {
				// A run cut short by the deadline (a loaded machine) may not have reached the
				// effect: not evidence that the entry is stale.
				t.Logf("proofKnown lists %q for %q; no run showed them, but a run of it was cut short", k.Findings, key)
				continue
			}
			if !shown {
				t.Errorf("proofKnown lists %q for %q, but no run shows them any more (the table was fixed, or the line is no longer generated or bounded): remove the entry", k.Findings, key)
			}
		}
	}
	if out := os.Getenv("REINS_PROOF_KNOWN_OUT"); out != "" {
		sort.Strings(literals)
		if err := os.WriteFile(out, []byte(strings.Join(literals, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	names := make([]string, 0, len(missing))
	for m := range missing {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		t.Run("missing/"+m, func(t *testing.T) {
			testenv.Missing(t, "%s is not installed: %d proof lines need it (e.g. %q); CI installs it (.ci/run)", m, len(missing[m]), missing[m][0])
		})
	}
	var cpu time.Duration
	byCPU := make([]proofResult, 0, len(results))
	for _, r := range results {
		cpu += r.CPU
		byCPU = append(byCPU, r)
	}
	sort.Slice(byCPU, func(i, j int) bool { return byCPU[i].CPU > byCPU[j].CPU })
	var top []string
	for _, r := range byCPU[:min(8, len(byCPU))] {
		top = append(top, fmt.Sprintf("%q %v", r.Row.Line, r.CPU.Round(time.Millisecond)))
	}
	var why []string
	rowsUnproven := 0
	for u, n := range unproven {
		why = append(why, fmt.Sprintf("%s (%d rows)", u, n))
		rowsUnproven += n
	}
	sort.Strings(why)
	if len(why) > 0 {
		t.Logf("unproven (not run; proofUnpackaged and proofNotInCI say why):\n\t%s", strings.Join(why, "\n\t"))
	}
	t.Logf("%d rows: %d run (%d with findings, %d stopped at the deadline, %d with a process whose last lines strace kept), %d unproven, %d not run (their claim is not bounded), %d programs missing; the runs took %v of CPU, the most: %s",
		len(results), ran, failed, timeouts, unfinished, rowsUnproven, skipped, len(missing), cpu.Round(time.Second), strings.Join(top, ", "))
}

// knownProgram returns the program whose proofKnown entry lists f for r and the entry's
// finding that matched, or "".
func knownProgram(known proofKnownSet, r proofResult, f proofFinding) (string, string) {
	for _, p := range r.Programs {
		if e := matchKey(known.programs[p], f.Key); e != "" {
			return p, e
		}
	}
	return "", ""
}

func timedOut(b bool) string {
	if b {
		return ", stopped at the deadline"
	}
	return ""
}

func findingStrings(fs []proofFinding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

// knownLiteral spells a proofKnown entry for a result.
func knownLiteral(r proofResult) string {
	keys := make([]string, 0, len(r.Findings))
	var details []string
	for _, f := range r.Findings {
		if !slices.Contains(keys, f.Key) {
			keys = append(keys, f.Key)
		}
		details = append(details, f.Detail)
	}
	sort.Strings(keys)
	return fmt.Sprintf("{Line: %q, Entry: %q, Findings: %#v}, // %s", r.Row.Line, r.Row.Entry, keys, strings.Join(details, "; "))
}

// FuzzProof runs generated and mutated lines under the tracer: any line the analysis claims
// bounded must stay inside its claim. Its seeds are combinations of several options of one
// table (comboLines) and the inputs kept in testdata/fuzz/FuzzProof; a finding on a program
// that proofKnown already lists for that program is not reported again.
func FuzzProof(f *testing.F) {
	if raceEnabled || testing.Short() {
		f.Skip("-short or the race detector: FuzzProof's seeds run every line under strace; the main test pass runs them")
	}
	skip := map[string]bool{}
	for _, k := range proofKnown {
		if k.Entry != "" {
			skip[k.Entry] = true
		}
		if k.Program != "" {
			skip[k.Program+": operands"] = true // the program's rows fail whatever their options
		}
	}
	n := 24
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		n = 1500 // fuzzing: start from many combinations
	}
	if v, err := strconv.Atoi(os.Getenv("REINS_PROOF_SEEDS")); err == nil && v > 0 {
		n = min(v, 5000) // run that many combinations as the seed corpus (every failure at once)
	}
	for _, l := range comboLines(n, 22, skip) {
		f.Add(l)
	}
	h := newProofHarness(f, f.TempDir())
	known := proofKnownIndex()
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 512 || strings.ContainsAny(line, "\x00\r") {
			return
		}
		r := h.prove(context.Background(), proofRow{Entry: "fuzz", Line: line})
		switch {
		case r.Err != nil:
			t.Fatalf("%q: the harness failed: %v", line, r.Err)
		case len(r.Missing) > 0:
			testenv.Missing(t, "%q needs %v, which is not installed", line, r.Missing)
		case r.Skipped != "" || len(r.Unproven) > 0:
			return
		}
		var unknown []proofFinding
		for _, f := range r.Findings {
			if !known.explains(r, f) {
				unknown = append(unknown, f)
			}
		}
		if _, listed := known.lines[line]; listed && len(r.Findings) == 0 {
			t.Fatalf("%q is in proofKnown but now stays inside its claim: remove it from the list", line)
		}
		if len(unknown) > 0 {
			t.Fatalf("%q does what the analysis does not claim (programs %v%s):\n\t%s\n\t%s", line, r.Programs, timedOut(r.TimedOut),
				strings.Join(findingStrings(unknown), "\n\t"), knownLiteral(r))
		}
	})
}
