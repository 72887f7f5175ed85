package argcheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/internal/testenv"
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
	m, err := pathmatch.New(nil, nil)
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
		"ls -d */", "du -sh * | sort -h", "for f in *; do wc -l \"$f\"; done", "eval x; ls -d */", "declare -i n; cat *",
		"echo $((x)); cat */*", "set -f; ls *", "find . -path '*/config'", "cat ./*/", "cat [[:alpha:]]*",
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
	m, err := pathmatch.New([]string{"secrets/prod.json", "/etc/shadow"}, nil)
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
	m, err := pathmatch.New([]string{"secrets/prod.json", "/etc/shadow"}, nil)
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
	require.NoError(t, os.Symlink("d", filepath.Join(root, "ldir")))
	tests := []struct {
		pattern                string
		dotAll, fold, dirsOnly bool
		want                   []string
	}{
		{"*", false, false, true, []string{"d", "ldir"}}, // "*/": directories and links to them
		{"*", false, false, false, []string{"C.TXT", "a.txt", "b.txt", "d", "ldir"}},
		{"d/*", true, false, true, []string{"d/.h", "d/e"}},
		{"*.txt", false, false, false, []string{"a.txt", "b.txt"}},
		{"*.txt", true, false, false, []string{".hidden.txt", "a.txt", "b.txt"}},
		{"*.txt", false, true, false, []string{"C.TXT", "a.txt", "b.txt"}},
		{".h*", false, false, false, []string{".hidden.txt"}},
		{"[!a].txt", false, false, false, []string{"b.txt"}},
		{"d/*/*.txt", false, false, false, []string{"d/e/y.txt"}},
		{"d/*/*.txt", true, false, false, []string{"d/.h/z.txt", "d/e/y.txt"}},
		{"**/*.txt", false, false, false, []string{"a.txt", "b.txt", "d/e/y.txt", "d/x.txt"}},
		{"nothing*", false, false, false, nil},
	}
	for _, tt := range tests {
		got, err := expandGlob(filepath.Join(root, tt.pattern), globMode{dotAll: tt.dotAll, fold: tt.fold, dirsOnly: tt.dirsOnly}, 1000)
		require.NoError(t, err)
		assert.Equal(t, tt.want, nilIfEmpty(rel(got)), "expandGlob(%q, dotAll=%v, fold=%v, dirsOnly=%v)", tt.pattern, tt.dotAll, tt.fold, tt.dirsOnly)
	}
	_, err := expandGlob(filepath.Join(root, "**/*"), globMode{}, 3)
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
		"ls -d */", "du -sh * | sort -h", "cat dots/*/", "GLOBIGNORE=x; cat dots/*", "cat */*", "wc -l < dots/*",
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

// globWorkspace is a workspace with the denied paths a glob can meet: a
// secret file (.env), a secret directory (secrets, a DeniedPaths entry),
// a repository (.git, readable to the kernel) and a write-protected file
// (.npmrc), beside plain files and directories. masked is what the
// hardened sandbox masks there: the scan its runs make.
func globWorkspace(t testing.TB) (root string, m pathmatch.Matcher, masked func(string) bool) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	m, err = pathmatch.New([]string{"secrets"}, nil)
	require.NoError(t, err)
	for _, d := range []string{".git", "secrets", "src", "sub"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, p := range []string{".env", ".git/config", ".npmrc", "secrets/id", "src/x.go", "a.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink(".env", filepath.Join(root, "envlink")))
	masks, _, err := pathmatch.FindProtected(m, []string{root})
	require.NoError(t, err)
	require.Subset(t, masks, []string{filepath.Join(root, ".env"), filepath.Join(root, "secrets")})
	require.NotContains(t, masks, filepath.Join(root, ".git"))
	return root, m, func(p string) bool {
		for _, k := range masks {
			if p == k || strings.HasPrefix(p, k+"/") {
				return true
			}
		}
		return false
	}
}

// TestGlobJudgement (issue 22): a script's glob is judged by what the
// shell expands it to when the check can prove bash's default glob
// options, and by everything it could match otherwise; a match the
// kernel masks is no refusal, one it leaves readable (.git, .npmrc) or
// that no kernel masks (local) is.
func TestGlobJudgement(t *testing.T) {
	t.Parallel()
	root, m, masked := globWorkspace(t)
	tests := []struct {
		script        string
		shell         string   // "" is bash
		env           []string // the command's environment
		masked, local bool     // refused with Masked, refused without
	}{
		// Everyday lines: "*" and "*/" do not match dot names in bash;
		// what they match of the secrets is masked.
		{script: "ls -d */", local: true},
		{script: "du -sh * | sort -h", local: true},
		{script: "ls", local: false},
		{script: "cat *", local: true},     // envlink is .env, masked
		{script: "wc -l */*", local: true}, // secrets/id, masked
		{script: "grep -n TODO src/*.go", local: false},
		{script: "for f in *; do wc -l \"$f\"; done", local: true},
		{script: "set -euo pipefail; du -sh *", local: true},
		{script: "ls nothing*", local: false}, // no match at all
		{script: "cat a.t?t > out", local: false},
		// Patterns that spell a denied name are refused as ever.
		{script: "cat .e*", masked: true, local: true},
		{script: "head -c 100 .e*", masked: true, local: true},
		{script: "cat [.]git/config", masked: true, local: true},
		{script: "cat secrets/*", masked: true, local: true},
		// Shell state the check cannot follow: judged with dot names.
		{script: "shopt -s dotglob; cat *", masked: true, local: true},
		{script: "GLOBIGNORE=x; cat *", masked: true, local: true},
		{script: "cat *", env: []string{"BASHOPTS=dotglob"}, masked: true, local: true},
		{script: "cat *", env: []string{"BASH_ENV=./setup"}, masked: true, local: true},
		{script: "eval \"$X\"; ls -d */", masked: true, local: true},
		{script: ". ./setup; ls -d */", masked: true, local: true},
		{script: "$C x; ls -d */", masked: true, local: true},
		{script: "declare \"$N=x\"; ls -d */", masked: true, local: true},
		{script: "trap 'x' DEBUG; ls -d */", masked: true, local: true},
		{script: "set -f; ls -d */", masked: true, local: true},
		{script: "ls -d */", shell: "zsh", masked: true, local: true},
		// A pattern the program matches itself, or that the shell
		// passes on as written, may reach .git.
		{script: "find . -path '*/config' -exec cat {} +", masked: true, local: true},
		{script: "cat */config", masked: true, local: true}, // nothing outside .git: passed on as written
		{script: "ls -d \\*/", masked: true, local: true},
		{script: "cat **/config", masked: true, local: true},
		{script: "tool --files=*", masked: true, local: true},
		{script: "ls -d */; tool --files=*/", masked: true, local: true}, // the same pattern, once as written
		{script: "find . -name '*.go'", local: false},
	}
	for _, tt := range tests {
		shell := tt.shell
		if shell == "" {
			shell = "bash"
		}
		args := []string{shell, "-c", tt.script}
		for _, c := range []struct {
			masked func(string) bool
			want   bool
		}{{masked, tt.masked}, {nil, tt.local}} {
			vs := Host(m, root, args, tt.env, Scripts{Lenient: true, Masked: c.masked})
			assert.Equal(t, c.want, len(vs) > 0, "%s -c %q (masked: %v): %v", shell, tt.script, c.masked != nil, vs)
		}
	}
}

// TestGlobMaskedNeverExcusesAWord: Masked excuses what a glob matches,
// never a word that names a denied path, masked or not.
func TestGlobMaskedNeverExcusesAWord(t *testing.T) {
	t.Parallel()
	root, m, masked := globWorkspace(t)
	for _, s := range []string{"cat .env", "cat envlink", "ls secrets", "cat secrets/id", "cat .git/config", "cat .npmrc"} {
		assert.NotEmpty(t, Host(m, root, []string{"bash", "-c", s}, nil, Scripts{Lenient: true, Masked: masked}), s)
	}
}

func TestReadGlobWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script   string
		defaults bool
		shell    []string // shell globs
		other    []string // glob values that are not
	}{
		{"ls -d */", true, []string{"*/"}, nil},
		{"cat '*.go' *.go", true, []string{"*.go"}, []string{"*.go"}},
		{"find . -name \"*.go\"", true, nil, []string{"*.go"}},
		{"x=*; cat <*.txt", true, []string{"*.txt"}, []string{"*"}},
		{"for f in a*; do :; done", true, []string{"a*"}, nil},
		{"[[ $x == a* ]]", true, nil, []string{"a*"}},
		{"tool --x=*", true, nil, []string{"--x=*"}},
		{"cat a\\*", true, nil, []string{"a*"}},
		{"export A=1; read -r L; printf '%s' x; cat *", true, []string{"*"}, nil},
		{"export \"$A\"; cat *", false, []string{"*"}, nil},
		{"printf -v \"$n\" x", false, nil, nil},
		{"export PATH=\"$PATH:/x\"; local -r y=1", true, nil, nil},
		{"declare -i n; n=$x", false, nil, nil},
		{"declare -n r=$x", false, nil, nil},
		{"echo $((x))", false, nil, nil},
		{"((x))", false, nil, nil},
		{"let x", false, nil, nil},
		{"[[ $a -eq 1 ]]", false, nil, nil},
		{"[[ -f a ]]", true, nil, nil},
		{"echo ${a[x]} ${s:x}", false, nil, nil},
		{"a[x]=1", false, nil, nil},
		{"command shopt -s nullglob", false, nil, nil},
		{"coproc cat", false, nil, nil},
		{"set -o nounset +e -- -f", true, nil, nil},
		{"set -ef", false, nil, nil},
		{"shopt -s nocaseglob", false, nil, nil},
		{"echo $(", false, nil, nil},
	}
	for _, tt := range tests {
		g := readGlobWords("bash", tt.script, nil, "/home/x")
		assert.Equal(t, tt.defaults, g.defaults, "defaults of %q", tt.script)
		assert.ElementsMatch(t, tt.shell, keys(g.shell), "shell globs of %q", tt.script)
		assert.ElementsMatch(t, tt.other, keys(g.other), "other globs of %q", tt.script)
	}
	assert.False(t, readGlobWords("zsh", "ls", nil, "").defaults)
	assert.False(t, readGlobWords("bash", "ls", []string{"SHELLOPTS=noglob"}, "").defaults)
	assert.True(t, readGlobWords("sh", "ls", []string{"PATH=/bin"}, "").defaults)
	assert.False(t, readGlobWords("bash", "ls", []string{"BASH_FUNC_ls%%=() { :; }"}, "").defaults)
	assert.False(t, readGlobWords("bash", strings.Repeat("ls;", maxGlobScript/3+1), nil, "").defaults)
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// FuzzGlobAgainstBash holds the glob judgement to bash itself: whatever
// bash expands a word to in the glob workspace, when one of the paths is
// a denied path the kernel leaves readable (.git, .npmrc, .git/config),
// or any denied path without Masked, the check refuses the line.
func FuzzGlobAgainstBash(f *testing.F) {
	bash := testenv.RequireTool(f, "bash", "the glob check is compared with bash's own expansion")
	for _, s := range []string{
		"*", "*/", "*/*", ".*", "*/config", "?git", "[.]*", "*/.*", "**", "**/*", "s*/*", "*[!a]*", "./*", "*/./*",
		"../*", "x/../*", "*.go", "src/../.g*", "[[:punct:]]*", "[^a]*", ".[!.]*",
	} {
		f.Add(s)
	}
	root, m, masked := globWorkspace(f)
	f.Fuzz(func(t *testing.T, word string) {
		if len(word) == 0 || len(word) > 40 || strings.ContainsAny(word, "\x00\n'\"\\$`;&|<>(){}!~ \t") {
			return
		}
		if strings.HasPrefix(word, "-") || strings.HasPrefix(word, "#") || strings.HasPrefix(word, "=") || strings.HasPrefix(word, "/") {
			return // an option, a comment, or the whole file system
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bash, "-c", "printf '%s\\n' "+word)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return
		}
		var readable, denied bool
		for _, p := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			abs := p
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(root, p)
			}
			if _, err := os.Lstat(abs); err != nil {
				continue // the pattern as written, or not a path
			}
			pc, err := m.CheckMemo(root, abs, nil)
			if err != nil || !pc.Denied {
				continue
			}
			denied = true
			readable = readable || !masked(pc.Resolved)
		}
		args := []string{"bash", "-c", "ls -d " + word}
		if readable {
			assert.NotEmpty(t, Host(m, root, args, nil, Scripts{Lenient: true, Masked: masked}), "bash expands %q to %q, the kernel leaves one readable", word, out)
		}
		if denied {
			assert.NotEmpty(t, Host(m, root, args, nil, Scripts{Lenient: true}), "bash expands %q to %q", word, out)
		}
	})
}
