package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
)

// TestStoryIsConsistent runs the quickstart and checks that its output tells one consistent
// story: each step's decision is the table's, a human is asked only about a CONFIRM (or about an
// allowed line, with the reason said), the record counts add up to the records shown, nothing
// names an id, a time or the temporary directory, and what it says it keeps is kept.
func TestStoryIsConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole quickstart (-short)")
	}
	dir := t.TempDir()
	var b strings.Builder
	require.NoError(t, run(context.Background(), dir, &b))
	out := b.String()

	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	assert.NotContains(t, out, dir)
	assert.NotContains(t, out, real)
	for _, literal := range []string{"$TMP", "<id>", "$HOME"} {
		assert.NotContains(t, out, literal)
	}
	assert.NotRegexp(t, `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`, out, "an id")
	assert.NotRegexp(t, `\bgrant:g[0-9a-f]+`, out, "a grant id")
	assert.NotRegexp(t, `\d{4}-\d\d-\d\dT|\d\d:\d\d:\d\d`, out, "a time")
	assert.Contains(t, out, "DIR below is", "the placeholder is explained")

	blocks := steps(out)
	table := supervisedColumn(t, blocks["1"])
	shown := map[string]int{} // records shown under the steps, by kind
	for n, block := range blocks {
		if n == "1" || n == "10" || n == "11" {
			continue
		}
		action := strings.SplitN(strings.SplitN(block, "\n", 2)[0], ": ", 2)
		var decision string
		granted, halted := false, false
		for _, line := range strings.Split(block, "\n") {
			if m := regexp.MustCompile(`^   ([a-z_]+): (.*)$`).FindStringSubmatch(line); m != nil {
				shown[m[1]]++
				if m[1] == "decision" {
					decision = strings.SplitN(m[2], " ", 2)[0]
					granted = strings.Contains(m[2], " by the session grant of step ")
					halted = strings.Contains(m[2], " by halted: ")
				}
			}
		}
		if want, ok := table[action[len(action)-1]]; ok && len(action) == 2 && !halted {
			if granted {
				// A grant answers what the table asks about, and keeps its obligations.
				want = strings.Replace(want, "CONFIRM", "ALLOW", 1)
			}
			assert.Equal(t, want, decision, "step %s decides what the table says", n)
		}
		if strings.Contains(block, "\n   approval: ") {
			switch {
			case strings.HasPrefix(decision, "CONFIRM"):
			case strings.HasPrefix(decision, "ALLOW") && strings.Contains(decision, "+sandbox"):
				assert.Contains(t, block, "has no sandbox that enforces", "step %s says why an allowed line is asked about", n)
			default:
				t.Errorf("step %s asks the human about a %s", n, decision)
			}
		}
	}

	// Step 10 counts the records by kind: the counts add up to the total, and to what was shown.
	m := regexp.MustCompile(`hash chain verified; (\d+) records`).FindStringSubmatch(blocks["10"])
	require.NotNil(t, m, blocks["10"])
	total, _ := strconv.Atoi(m[1])
	sum := 0
	for _, line := range strings.Split(blocks["10"], "\n")[1:] {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		n, err := strconv.Atoi(f[1])
		require.NoError(t, err, line)
		assert.Equal(t, shown[f[0]], n, "records of kind %s counted as shown", f[0])
		delete(shown, f[0])
		sum += n
	}
	assert.Equal(t, total, sum, "the counts add up")
	assert.Empty(t, shown, "every kind shown is counted")

	// What it says it keeps is kept: the log verifies, the timeline is the checkpoints'.
	res, err := audit.Verify(filepath.Join(dir, "audit.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, total, res.Records)
	cp, err := checkpoint.New(context.Background(), filepath.Join(dir, "project"), nil)
	require.NoError(t, err)
	list, err := cp.List(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, list)
	for i, c := range list {
		assert.Contains(t, blocks["11"], "\n    "+strconv.Itoa(i+1)+"  before ", "timeline entry %d (%s)", i+1, c.Label)
	}
	assert.NotContains(t, blocks["11"], "\n    "+strconv.Itoa(len(list)+1)+"  ")
	_, err = os.Stat(filepath.Join(dir, "project", "main.go"))
	assert.NoError(t, err)
}

// steps splits the output into its numbered sections, by number.
func steps(out string) map[string]string {
	blocks := map[string]string{}
	for _, part := range regexp.MustCompile(`(?m)^(\d+)\. `).Split(out, -1)[1:] {
		n := regexp.MustCompile(`(?m)^(\d+)\. `).FindAllStringSubmatch(out, -1)[len(blocks)][1]
		blocks[n] = part
	}
	return blocks
}

// supervisedColumn reads the decision table: action to the supervised column.
func supervisedColumn(t *testing.T, block string) map[string]string {
	t.Helper()
	col := map[string]string{}
	lines := strings.Split(block, "\n")
	require.Greater(t, len(lines), 2)
	header := lines[1]
	at := strings.Index(header, "supervised")
	require.Greater(t, at, 0, header)
	for _, line := range lines[2:] {
		if len(line) <= at || !strings.HasPrefix(line, "   ") {
			continue
		}
		col[strings.TrimSpace(line[:strings.Index(header, "PROFILE-DEV")])] = strings.TrimSpace(line[at:])
	}
	require.NotEmpty(t, col)
	return col
}
