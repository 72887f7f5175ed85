package script_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox/script"
)

func TestBuiltin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		// unreadable is a part of the first reason given, "" when every
		// command is readable.
		unreadable string
		// words are the literal words the reader returns (Argv and
		// Words of every command, in order).
		words []string
	}{
		{"echo hello > out.txt && cat out.txt", "", []string{"echo", "hello", "out.txt", "cat", "out.txt"}},
		{"rm -rf build; exit 3", "", []string{"rm", "-rf", "build", "f", "exit", "3"}},
		{"sort -oout data", "", []string{"sort", "-oout", "data", "out", "ut", "t"}},
		{"sort -o.env data", "option of sort", []string{"sort", "-o.env", "data", ".env", "env", "nv", "v"}},
		{"cat <&A", "descriptor that is not a number", []string{"cat"}},
		{`cat 'a b' "c d" e\ f`, "", []string{"cat", "a b", "c d", "e f"}},
		{"cat ~/x", "", []string{"cat", "/home/u/x"}},
		{"cat $'.git/\\x63onfig'", "", []string{"cat", ".git/config"}},
		{`echo "$HOME" $(cat .env)`, "", []string{"echo", "cat", ".env"}},
		{"ls -la | wc -l 2>&1", "", []string{"ls", "-la", "a", "wc", "-l"}},
		{"cat <<EOF\n.env\nEOF", "", []string{"cat"}},
		{"comm -12 <(sort a.txt) <(sort b.txt)", "argument 2 is computed", []string{"comm", "-12", "2", "sort", "a.txt", "sort", "b.txt"}},
		{"(cd sub && ls) ; { cat x; }", "", []string{"cd", "sub", "ls", "cat", "x"}},
		{"", "", nil},
		{"go test ./...", "does not know what go does", []string{"go", "test", "./..."}},
		{"grep -rn TODO src && date -u", "", []string{"grep", "-rn", "TODO", "src", "n", "date", "-u"}},
		{"python3 -c 'open(\".e\"+\"nv\")'", "does not know what python3", []string{"python3", "-c", `open(".e"+"nv")`}},
		{"./cat x", "given by its path", []string{"./cat", "x"}},
		{"$P x", "computed at run time", []string{"x"}},
		{"cat $F", "argument 1 is computed", []string{"cat"}},
		{"cat {.e,x}nv", "argument 1 is computed", []string{"cat"}},
		{"echo {a,b}", "", []string{"echo"}},
		{"echo ${x:-y}", "argument 1 is computed", []string{"echo"}},
		{"FOO=.env cat x", "it sets FOO", []string{"cat", "x", ".env"}},
		{"X=1", "it sets X", []string{"1"}},
		{"cat --files0-from=list", "long option", []string{"cat", "--files0-from=list"}},
		{"cat > $F", "redirection target is computed", []string{"cat"}},
		{"cat ~root/x", "argument 1 is computed", []string{"cat"}},
		{"make X=~/.ssh/id_rsa", "does not know what make", []string{"make"}},
		{"for f in .env a; do cat $f; done", "compound command", []string{".env", "a", "cat"}},
		{"f() { cat .env; }; f", "compound command", []string{"cat", ".env", "f"}},
		{"cd", "cd without a directory", []string{"cd"}},
		{"cd - && cat x", "cd without a directory", []string{"cd", "-", "cat", "x"}},
		{"eval cat .env", "does not know what eval", []string{"eval", "cat", ".env"}},
		{"sh -c 'cat .env'", "does not know what sh", []string{"sh", "-c", "cat .env"}},
	}
	for _, tt := range tests {
		cmds, err := script.Builtin(tt.text, "/w", "/home/u")
		require.NoError(t, err, "Builtin(%q)", tt.text)
		var words []string
		reason := ""
		for _, c := range cmds {
			words = append(words, c.Argv...)
			words = append(words, c.Words...)
			if reason == "" {
				reason = c.Unreadable
			}
		}
		if tt.unreadable == "" {
			assert.Empty(t, reason, "Builtin(%q)", tt.text)
		} else {
			assert.Contains(t, reason, tt.unreadable, "Builtin(%q)", tt.text)
		}
		assert.Equal(t, tt.words, words, "Builtin(%q)", tt.text)
	}
}

func TestBuiltinBounds(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"echo (",
		strings.Repeat("(", 101) + "true" + strings.Repeat(")", 101),
		strings.Repeat("x", script.MaxScript+1),
		strings.Repeat("echo a;", 20000),
	} {
		_, err := script.Builtin(text, "/w", "")
		require.ErrorIs(t, err, script.ErrUnread, "Builtin(%.40q)", text)
	}
	cmds, err := script.Builtin("cat ~/x", "/w", "")
	require.NoError(t, err)
	assert.NotEmpty(t, cmds[0].Unreadable, "~ is unreadable without a home")
}

// FuzzBuiltin: any script is read without a panic, the same way twice,
// and a command whose words are not all spelled out says why.
func FuzzBuiltin(f *testing.F) {
	for _, s := range []string{"echo hi > out", "cat .env", "cd sub && cat ../.git/config", "cat *.txt", "f() { cat \"$1\"; }; f .env",
		"bash -c 'cat .ssh/id_rsa'", "echo $(", "cat <<EOF\n$(cat .env)\nEOF", "x=.env; cat $x", "cat {a,b}/.git", "[ -f .env ] && echo yes",
		"cat ~/.ssh/config", "cd /; cd -; cat x", "echo a\\\nb", "cat $'\\cA'", "a=(1 2); echo ${a[@]}", "cat <(ls) >(wc)", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		a, errA := script.Builtin(text, "/w", "/home/u")
		b, errB := script.Builtin(text, "/w", "/home/u")
		assert.Equal(t, errA, errB)
		assert.Equal(t, a, b)
		for _, c := range a {
			assert.LessOrEqual(t, len(c.Text), 210)
		}
	})
}
