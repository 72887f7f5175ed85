package argcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/sandbox/internal/pathmatch"
	"github.com/reins-go/reins/sandbox/script"
	"github.com/reins-go/reins/sandbox/script/shellanalysis"
)

// workspace returns a resolved temporary directory and the default
// matcher.
func workspace(t testing.TB) (string, pathmatch.Matcher) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	m, err := pathmatch.New(nil)
	require.NoError(t, err)
	return root, m
}

func TestShellScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args   []string
		script string
		ok     bool
	}{
		{[]string{"sh", "-c", "ls"}, "ls", true},
		{[]string{"/bin/bash", "-e", "-c", "ls", "arg0"}, "ls", true},
		{[]string{"bash", "-ec", "ls"}, "ls", true},
		{[]string{"bash", "-o", "pipefail", "-c", "ls"}, "ls", true},
		{[]string{"sh", "script.sh"}, "", false},
		{[]string{"python", "-c", "print()"}, "", false},
		{[]string{"sh", "-c"}, "", false},
		{[]string{"sh", "--", "-c", "x"}, "", false},
	}
	for _, tt := range tests {
		script, ok := ShellScript(tt.args)
		assert.Equal(t, tt.ok, ok, "ShellScript(%q)", tt.args)
		assert.Equal(t, tt.script, script, "ShellScript(%q)", tt.args)
	}
}

func TestHostAndLexical(t *testing.T) {
	t.Parallel()
	root, m := workspace(t)
	require.NoError(t, os.Symlink(".git", filepath.Join(root, "innocent")))
	tests := []struct {
		args          []string
		host, lexical bool // refused
	}{
		{[]string{"ls", "src"}, false, false},
		{[]string{"cat", ".git/config"}, true, true},
		{[]string{"tool", "--config=.env"}, true, true},
		{[]string{"cat", "innocent/config"}, true, false}, // only the host follows the link
		{[]string{"sh", "-c", "cat .ssh/id_rsa"}, true, true},
		{[]string{"sh", "-c", "echo $("}, true, true}, // does not parse
	}
	for _, tt := range tests {
		assert.Equal(t, tt.host, len(Host(m, root, tt.args, nil, Scripts{})) > 0, "Host(%q)", tt.args)
		assert.Equal(t, tt.lexical, len(Lexical(m, root, tt.args, Scripts{})) > 0, "Lexical(%q)", tt.args)
	}
	// The reader seam: what a reader returns is checked, its error
	// refuses, and Lenient refuses no unreadable command but still
	// checks its words.
	reader := func(text, dir, home string) ([]script.Command, error) {
		switch text {
		case "fails":
			return nil, assert.AnError
		case "unreadable":
			return []script.Command{{Text: text, Argv: []string{"tool", "ok"}, Unreadable: "why"}}, nil
		case "unreadable words":
			return []script.Command{{Text: text, Argv: []string{"tool"}, Words: []string{".env"}, Unreadable: "why"}}, nil
		}
		return []script.Command{{Text: text, Paths: []script.Path{{Path: dir + "/computed/.env", Raw: "computed/.env"}}}}, nil
	}
	for _, tt := range []struct {
		script  string
		lenient bool
		want    []string // refusal kinds
	}{
		{"anything", false, []string{pathmatch.KindDeniedPath}},
		{"fails", false, []string{pathmatch.KindUncheckable}},
		{"fails", true, []string{pathmatch.KindUncheckable}},
		{"unreadable", false, []string{pathmatch.KindUncheckable}},
		{"unreadable", true, nil},
		{"unreadable words", true, []string{pathmatch.KindDeniedPath}},
	} {
		var kinds []string
		for _, v := range Host(m, root, []string{"sh", "-c", tt.script}, nil, Scripts{Read: reader, Lenient: tt.lenient}) {
			kinds = append(kinds, v.Kind)
		}
		assert.Equal(t, tt.want, kinds, "script %q, lenient %v", tt.script, tt.lenient)
	}
}

// checkScript checks "sh -c SCRIPT" on this host with scripts.
func checkScript(m pathmatch.Matcher, dir, text string, env []string, scripts Scripts) []pathmatch.Refusal {
	return Host(m, dir, []string{"sh", "-c", text}, env, scripts)
}

// FuzzCheckScript feeds arbitrary scripts to the check, with the
// built-in reader, strict and lenient, and with the full shell analysis:
// it must not panic and must give the same answer twice; the lenient
// check refuses nothing the strict one lets through.
func FuzzCheckScript(f *testing.F) {
	for _, s := range []string{
		"echo hi > out", "cat .env", "cd sub && cat ../.git/config", "cat *.txt", "ls **/.e*",
		"f() { cat \"$1\"; }; f .env", "bash -c 'bash -c \"cat .ssh/id_rsa\"'", "echo $(", "cat <<EOF\n.env\nEOF",
		"x=.env; cat $x", "cat {a,b}/.git", "[ -f .env ] && echo yes", "cat ~/.ssh/config", "cd /; cd -; cat x",
		"shopt -s dotglob; rm -rf *", "tar -C .git -xf x.tar", "echo a\\\nb", "",
	} {
		f.Add(s)
	}
	root, m := workspace(f)
	f.Fuzz(func(t *testing.T, script string) {
		if strings.IndexByte(script, 0) >= 0 || len(script) > 4096 {
			return
		}
		env := []string{"HOME=/home/fuzz"}
		for _, scripts := range []Scripts{{}, {Lenient: true}, {Read: shellanalysis.Read}} {
			first := checkScript(m, root, script, env, scripts)
			second := checkScript(m, root, script, env, scripts)
			assert.Equal(t, first, second)
			for _, v := range first {
				assert.NotEmpty(t, v.Kind)
				assert.NotEmpty(t, v.Detail)
			}
		}
		if len(checkScript(m, root, script, env, Scripts{})) == 0 {
			assert.Empty(t, checkScript(m, root, script, env, Scripts{Lenient: true}))
		}
	})
}

// FuzzScriptQuotedDeniedPath checks that a denied path reaches the
// check however it is quoted in the script.
func FuzzScriptQuotedDeniedPath(f *testing.F) {
	for _, s := range []string{"config", "", "a b", "x'y", `"q"`, "$(id)", "../x", "*", "nl\nx", "\xff"} {
		f.Add(s)
	}
	root, m := workspace(f)
	f.Fuzz(func(t *testing.T, name string) {
		q, err := syntax.Quote(".git/"+name, syntax.LangBash)
		if err != nil {
			return // NUL bytes cannot be quoted
		}
		for _, text := range []string{"cat " + q, "echo x > " + q, "mytool " + q} {
			for _, scripts := range []Scripts{{}, {Lenient: true}, {Read: shellanalysis.Read}} {
				vs := checkScript(m, root, text, nil, scripts)
				assert.NotEmpty(t, vs, "script %q ran unchecked (%+v)", text, scripts)
			}
		}
	})
}

// FuzzCouldMatchPattern checks that a pattern without glob characters
// is judged exactly like a literal path.
func FuzzCouldMatchPattern(f *testing.F) {
	for _, s := range []string{"a/.git/b", "x/.ENV", "id_rsa", "a/b/c", "secrets/prod.json", ".git", "a//b"} {
		f.Add(s)
	}
	m, err := pathmatch.New([]string{"secrets/prod.json", "/etc/shadow"})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsAny(p, "*?[\\\x00") {
			return
		}
		abs := "/w/" + p
		_, want := m.Match(abs)
		_, got := couldMatchPattern(m, abs)
		assert.Equal(t, want, got, "couldMatchPattern(%q)", abs)
	})
}

func TestCouldMatchPattern(t *testing.T) {
	t.Parallel()
	m, err := pathmatch.New([]string{"secrets/prod.json", "/etc/shadow"})
	require.NoError(t, err)
	tests := []struct {
		pattern string
		want    bool
	}{
		{"/w/.e*", true},
		{"/w/*env", true},
		{"/w/.ss?/x", true},
		{"/w/[.]git/config", true},
		{"/w/[!a]git", true}, // the check lets a wildcard match a leading "." (as with dotglob)
		{"/w/[ab]git", false},
		{"/w/*/prod.json", true},
		{"/w/**/prod.json", true},
		{"/w/secrets/*.json", true},
		{"/w/*", false},
		{"/w/*/*", false},
		{"/w/**", false},
		{"/w/*.txt", false},
		{"/w/src/*.go", false},
		{"/etc/sha*", true},
		{"/w/etc/sha*", false},
		{"/w/ID_*", true},
	}
	for _, tt := range tests {
		_, got := couldMatchPattern(m, tt.pattern)
		assert.Equal(t, tt.want, got, "couldMatchPattern(%q)", tt.pattern)
	}
}

func TestExpandGlob(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, p := range []string{"a.txt", "b.txt", ".hidden.txt", "d/x.txt", "d/e/y.txt", "d/.h/z.txt", "C.TXT"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), nil, 0o644))
	}
	rel := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			r, err := filepath.Rel(root, p)
			require.NoError(t, err)
			out[i] = r
		}
		return out
	}
	tests := []struct {
		pattern      string
		dotAll, fold bool
		want         []string
	}{
		{"*.txt", false, false, []string{"a.txt", "b.txt"}},
		{"*.txt", true, false, []string{".hidden.txt", "a.txt", "b.txt"}},
		{"*.txt", false, true, []string{"C.TXT", "a.txt", "b.txt"}},
		{".h*", false, false, []string{".hidden.txt"}},
		{"[!a].txt", false, false, []string{"b.txt"}},
		{"d/*/*.txt", false, false, []string{"d/e/y.txt"}},
		{"d/*/*.txt", true, false, []string{"d/.h/z.txt", "d/e/y.txt"}},
		{"**/*.txt", false, false, []string{"a.txt", "b.txt", "d/e/y.txt", "d/x.txt"}},
		{"nothing*", false, false, nil},
	}
	for _, tt := range tests {
		got, err := expandGlob(filepath.Join(root, tt.pattern), tt.dotAll, tt.fold, 1000)
		require.NoError(t, err)
		assert.Equal(t, tt.want, nilIfEmpty(rel(got)), "expandGlob(%q, dotAll=%v, fold=%v)", tt.pattern, tt.dotAll, tt.fold)
	}
	_, err := expandGlob(filepath.Join(root, "**/*"), false, false, 3)
	require.Error(t, err, "the entry budget bounds the expansion")
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// BenchmarkCheckArgsPlain is the baseline of the script benchmarks: the
// argument check of a plain argument vector of similar length.
func BenchmarkCheckArgsPlain(b *testing.B) {
	root, m := workspace(b)
	args := []string{"go", "test", "-run", "TestX", "./pkg/...", "-count=1", "-v", "out.txt"}
	for b.Loop() {
		if vs := Host(m, root, args, nil, Scripts{}); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
}

// BenchmarkCheckScript measures the check of a typical "sh -c" script
// (cd, redirections, a pipeline, a glob) with the full shell analysis.
func BenchmarkCheckScript(b *testing.B) {
	root, m := workspace(b)
	require.NoError(b, os.MkdirAll(filepath.Join(root, "pkg"), 0o755))
	args := []string{"sh", "-c", "cd pkg && go test -run TestX ./... -count=1 2>&1 | tee ../out.txt; ls *.go > files.txt"}
	for b.Loop() {
		if vs := Host(m, root, args, nil, Scripts{Read: shellanalysis.Read}); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
}

// BenchmarkCheckScriptBuiltin measures the same kind of script with the
// built-in reader (a program it knows, so that it is not refused).
func BenchmarkCheckScriptBuiltin(b *testing.B) {
	root, m := workspace(b)
	require.NoError(b, os.MkdirAll(filepath.Join(root, "pkg"), 0o755))
	args := []string{"sh", "-c", "cd pkg && cat -n main_test.go 2>&1 | tee ../out.txt; ls ./*.go > files.txt"}
	for b.Loop() {
		if vs := Host(m, root, args, nil, Scripts{}); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
}

// FuzzBuiltinAtLeastAsStrict: local's default check (the built-in
// reader) refuses every script the check with the full shell analysis
// refuses. Importing package sandbox no longer links that analysis, and
// the default must not be weaker for it.
func FuzzBuiltinAtLeastAsStrict(f *testing.F) {
	for _, s := range []string{
		"echo hi > out", "cat .env", "cd sub && cat innocent", "cat .e*", "cat notes/*.txt", "ls * && cat dots/*",
		"shopt -s dotglob; cat dots/*", "bash -c 'cat .env'", "cat ~/.ssh/id_rsa", "FOO=.env mytool", "mytool --config=.env",
		`cat "$F"`, "python3 -c 'open(\".e\"+\"nv\")'", "curl -s x | sh", "cd $D && cat x", "f() { echo hi; }; f",
		"cd sub; ls -la; cat ../notes/a.txt", "sort -o.env data", "echo $(cat .env)", "cat <(cat .env)", "cat $'.e\\x6ev'",
		"tar -C .git -xf x.tar", "cat link2", "grep -rn x .", "grep -f .env x", "date -r .env", "printenv HOME", "egrep -e a -e b notes/*", "echo .gitignore >> .gitignore.txt", "cat {.e,x}nv", "wc -c < .env", "",
	} {
		f.Add(s)
	}
	root, m := workspace(f)
	for _, d := range []string{"sub", "notes", "dots"} {
		require.NoError(f, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, p := range []string{".env", "notes/a.txt", "dots/.env", "dots/plain"} {
		require.NoError(f, os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644))
	}
	require.NoError(f, os.Symlink("../.env", filepath.Join(root, "sub", "innocent")))
	require.NoError(f, os.Symlink(".env", filepath.Join(root, "link2")))
	f.Fuzz(func(t *testing.T, text string) {
		if strings.IndexByte(text, 0) >= 0 || len(text) > 4096 {
			return
		}
		env := []string{"HOME=/home/fuzz"}
		full := checkScript(m, root, text, env, Scripts{Read: shellanalysis.Read})
		builtin := checkScript(m, root, text, env, Scripts{})
		if len(full) > 0 {
			assert.NotEmpty(t, builtin, "the full analysis refuses %q (%v), the built-in reader lets it through", text, full)
		}
	})
}
