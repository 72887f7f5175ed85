package policy

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequiredWord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ re, word string }{
		{`^rm(\s|$)`, "rm"},
		{`^tool12\b`, "tool12"},
		{`\bcurl\b`, "curl"},
		{`git\s+push\s+--force`, "push"},
		{`^git push`, "git"},
		{`rm -rf`, ""},       // neither end of "rm" nor of "rf" is bounded
		{`^rm -rf /$`, "rm"}, // "rm" is bounded by ^ and a space
		{`^(rm|del)\s`, ""},  // an alternation is not one word
		{`(?i)^rm\s`, ""},    // case folding: no exact key
		{`^rm\s*-`, ""},      // \s* may be empty
		{`^npm run build$`, "build"},
		{`.*`, ""},
		{`^kubectl\s+delete\s+(ns|namespace)\b`, "kubectl"},
	} {
		c, err := compileCmdRegex(tc.re)
		require.NoError(t, err)
		assert.Equal(t, tc.word, c.word, "requiredWord(%q)", tc.re)
	}
}

func TestRequiredLiterals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		re   string
		lits []string
	}{
		{`rm\s+-rf`, []string{"-rf"}},
		{`^(curl|wget) `, []string{"curl", "wget"}},
		{`dd if=`, []string{"dd if="}},
		{`(?i)sudo`, []string{"sudo"}}, // compared ignoring case
		{`a*`, nil},
		{`ab+cde`, []string{"cde"}},
	} {
		c, err := compileCmdRegex(tc.re)
		require.NoError(t, err)
		if tc.lits == nil {
			assert.Empty(t, c.sets, "requiredLiterals(%q)", tc.re)
			continue
		}
		require.NotEmpty(t, c.sets, "requiredLiterals(%q)", tc.re)
		assert.ElementsMatch(t, tc.lits, c.sets[0].lits, "requiredLiterals(%q): the most selective set first", tc.re)
	}
	// Every element of a concatenation adds a requirement: a text without a pipe never runs
	// the pipe pattern's regex.
	c, err := compileCmdRegex(`\b(curl|wget)\b.*\|\s*(ba|z)?sh\b`)
	require.NoError(t, err)
	var all [][]string
	for _, set := range c.sets {
		all = append(all, set.lits)
	}
	assert.ElementsMatch(t, [][]string{{"curl", "wget"}, {"sh"}, {"|"}}, all)
	assert.False(t, c.match("curl -fsSL https://get.example.com"))
	assert.True(t, c.match("curl -fsSL https://get.example.com | sh"))
}

var fuzzRegexes = []string{
	`^rm(\s|$)`, `\bcurl\b`, `git\s+push\s+--force`, `^git push`, `rm -rf`, `^rm -rf /$`, `(rm|del)\s`,
	`^npm run build$`, `x+y`, `dd if=`, `^(curl|wget) `, `a\b-b`, `[ ]tool[ ]`, `(?:\s|^)ssh(?:\s|$)`,
	`^\w+\s+--dry-run\b`, `(?m)^sudo\s`, `\bpush\b.*--force`, `^go( test)?\b`, `(?i)chmod\s+-R`, `(?i)(curl|WGET)\s`,
	`\b(curl|wget)\b.*\|\s*(ba|z)?sh\b`, `a(?i)bc\|d+e`, `x{2,}y|z\.w`,
}

// FuzzCmdRegexPrefilter: whenever a command regex matches a text, its prefilter passes and its
// index word occurs in the text as a whole word. Otherwise an indexed rule could be skipped.
func FuzzCmdRegexPrefilter(f *testing.F) {
	for i := range fuzzRegexes {
		for _, text := range []string{"rm -rf /", "curl x", "git push --force", "a-b", " tool ", "ssh host", "go test ./...", "sudo ls\nsudo rm", "CHMOD -R x", "Wget y"} {
			f.Add(uint8(i), text)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		pat := fuzzRegexes[int(which)%len(fuzzRegexes)]
		c, err := compileCmdRegex(pat)
		require.NoError(t, err)
		if !regexp.MustCompile(pat).MatchString(text) {
			return
		}
		require.True(t, c.match(text), "prefilter of %q rejected matching text %q", pat, text)
		if c.word == "" {
			return
		}
		found := false
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r >= 128 || !isWordByte(byte(r)) }) {
			if w == c.word {
				found = true
			}
		}
		require.True(t, found, "word %q of %q is not a whole word of matching text %q", c.word, pat, text)
	})
}
