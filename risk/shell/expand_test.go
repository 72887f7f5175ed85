package shell_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// xrow is a command line of the expansion, cost and environment classes (issue 11, parts 2-4):
// the exact analysis, and the verdict under PROFILE-DEV, supervised and autonomous.
type xrow struct {
	line                       string
	risk, reads, writes, hosts string
	opaque                     bool
	dev, sup, auto             policy.Verdict
}

var expansionTable = []xrow{
	// Parameter operators that evaluate a value again, indirection, translation.
	{`echo ${v@P}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo "${v@P}"`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${v@E}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${v@A}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${v@Q}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${!x}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo "${!ref}"`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${!pre*}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${!pre@}`, "read_only,exec", "", "", "", true, C, C, C},
	{`x=${v@P}`, "read_only,exec", "", "", "", true, C, C, C},
	{"cat <<EOF\n${v@P}\nEOF", "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${x:-${v@P}}`, "read_only,exec", "", "", "", true, C, C, C},
	{`: ${v@P}`, "read_only,exec", "", "", "", true, C, C, C},
	{`[[ ${v@P} ]]`, "exec", "", "", "", true, C, C, C},
	{`for f in ${v@P}; do echo $f; done`, "read_only,exec", "", "", "", true, C, C, C},
	{`case ${v@P} in *) echo;; esac`, "read_only,exec", "", "", "", true, C, C, C},
	{"case x in $(touch m)) echo;; esac", "read_only,mutating", "", "m", "", false, C, C, A},
	{"case x in ${v@P}) echo;; esac", "read_only,exec", "", "", "", true, C, C, C},
	{`echo $"msg"`, "read_only,exec", "", "", "", true, C, C, C},

	// Arithmetic and subscripts over values the line does not give: bash evaluates the value
	// as an expression, and a subscript in it ("a[$(cmd)]") runs the command.
	{`X='a[$(touch m)]'; echo $((X))`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo $((X))`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo $(( $X + 1 ))`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo $[X]`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${a[$i]}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${a[i]}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo "${a[$(id)]}"`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo ${x:$off:2}`, "read_only,exec", "", "", "", true, C, C, C},
	{`(( X ))`, "exec", "", "", "", true, C, C, C},
	{`let X`, "exec", "", "", "", true, C, C, C},
	{`let "y=X"`, "exec", "", "", "", true, C, C, C},
	{`[[ $x -eq 1 ]]`, "exec", "", "", "", true, C, C, C},
	{`[[ $x -lt $y ]] && echo y`, "read_only,exec", "", "", "", true, C, C, C},
	{`[[ -v 'a[$(touch m)]' ]]`, "exec", "", "", "", true, C, C, C},
	{`declare -i n=$X`, "exec", "", "", "", true, C, C, C},
	{`typeset -i n`, "exec", "", "", "", true, C, C, C},
	{`declare -n r='a[$(touch m)]'`, "exec", "", "", "", true, C, C, C},
	{`a[$x]=1`, "read_only,exec", "", "", "", true, C, C, C},
	{`a=([$x]=1)`, "read_only,exec", "", "", "", true, C, C, C},
	{`unset 'a[$(touch m)]'`, "read_only,exec", "", "", "", true, C, C, C},
	{`read 'a[$(touch m)]' < f`, "read_only,exec", "f", "", "", true, C, C, C},
	{`printf -v 'a[$(touch m)]' %s x`, "read_only,exec", "", "", "", true, C, C, C},
	{`test -v 'a[$(touch m)]'`, "read_only,exec", "", "", "", true, C, C, C},
	{`[ -v 'a[$(touch m)]' ]`, "read_only,exec", "", "", "", true, C, C, C},
	{`command unset 'a[$(touch m)]'`, "read_only,exec", "", "", "", true, C, C, C},
	{`for ((i=0; i<n; i++)); do echo; done`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo $(( $(cat n) + 1 ))`, "read_only,exec", "n", "", "", true, C, C, C},
	// ... and over literal numbers or variables the line set to numbers: exact, not opaque.
	{`echo $((1+2))`, "read_only", "", "", "", false, A, A, A},
	{`i=3; echo $((i*2))`, "read_only", "", "", "", false, A, A, A},
	{`echo ${a[1]}`, "read_only", "", "", "", false, A, A, A},
	{`echo "${a[@]}"`, "read_only", "", "", "", false, A, A, A},
	{`[[ 1 -eq 1 ]] && echo y`, "read_only", "", "", "", false, A, A, A},
	{`echo $(($#+1))`, "read_only", "", "", "", false, A, A, A},
	{`unset 'a[1]'`, "read_only", "", "", "", false, A, A, A},
	{`unset x`, "read_only", "", "", "", false, A, A, A},

	// A glob in option position that may expand to a file named like an option.
	{`sort *.txt`, "read_only,exec", "*.txt", "", "", true, C, C, C},
	{`sort *`, "read_only,exec", "*", "", "", true, C, C, C},
	{`rg foo *`, "read_only,exec", "*", "", "", true, C, C, C},
	{`git diff *.go`, "read_only,exec", "", "", "", true, C, C, C},
	{`grep foo *.c`, "read_only,exec", "*.c", "", "", true, C, C, C},
	{`chmod 644 *`, "mutating,exec", "", "*", "", true, C, C, C},
	{`sort [a-z]*`, "read_only,exec", "[a-z]*", "", "", true, C, C, C},
	{`sort ?.txt`, "read_only,exec", "?.txt", "", "", true, C, C, C},
	// ... not when it starts with a literal other than "-", after "--", or for programs whose
	// options cannot write, run or reach anything.
	{`sort ./*.txt`, "read_only", "*.txt", "", "", false, A, A, A},
	{`sort src/*.go`, "read_only", "src/*.go", "", "", false, A, A, A},
	{`sort -- *.txt`, "read_only", "*.txt", "", "", false, A, A, A},
	{`wc -l *.go`, "read_only", "*.go", "", "", false, A, A, A},
	{`ls *.go`, "read_only", "*.go", "", "", false, A, A, A},
	{`cat *.md`, "read_only", "*.md", "", "", false, A, A, A},
	{`head -n 5 *.txt`, "read_only", "*.txt", "", "", false, A, A, A},

	// Bounded cost: brace expansion is counted before it is expanded.
	{`echo {1..20000000}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo {1..2000000}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}`, "read_only,exec", "", "", "", true, C, C, C},
	{`echo {1..64}`, "read_only", "", "", "", false, A, A, A},
	{`echo {1..65}`, "read_only,exec", "", "", "", true, C, C, C},
	{`bash -c 'echo {1..9999999}'`, "read_only,exec", "", "", "", true, C, C, C},

	// Environment prefixes and exports, by allowlist.
	{`LESSOPEN='|cmd %s' less f`, "read_only,exec", "f", "", "", true, C, C, C},
	{`PAGER='sh -c id' git log`, "read_only,exec", "", "", "", true, C, C, C},
	{`GIT_PAGER=less git log`, "read_only,exec", "", "", "", true, C, C, C},
	{`EDITOR=vim git commit`, "mutating,exec", "", "", "", true, C, C, C},
	{`BASH_ENV=x bash s.sh`, "exec", "s.sh", "", "", true, C, C, C},
	{`PYTHONSTARTUP=x python3`, "exec", "", "", "", true, C, C, C},
	{`PYTHONPATH=. python3 -m x`, "exec", "", "", "", true, C, C, C},
	{`NODE_OPTIONS='--require ./x.js' node a.js`, "exec", "a.js", "", "", true, C, C, C},
	{`PERL5OPT=-Mx perl a.pl`, "exec", "a.pl", "", "", true, C, C, C},
	{`RUBYOPT=-rx ruby a.rb`, "exec", "a.rb", "", "", true, C, C, C},
	{`LD_PRELOAD=./x.so ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`DYLD_INSERT_LIBRARIES=x ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`PATH=.:$PATH ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`IFS=/ ls`, "read_only", ".", "", "", false, A, A, A}, // bash and dash do not import IFS
	{`PS4='$(id)' bash -x s.sh`, "exec", "s.sh", "", "", true, C, C, C},
	{`SHELLOPTS=xtrace ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`PROMPT_COMMAND=id ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`FOO=1 ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`GIT_DIR=/tmp/x git status`, "read_only,exec", "", "", "", true, C, C, C},
	{`GIT_CONFIG_PARAMETERS="'core.pager=id'" git log`, "read_only,exec", "", "", "", true, C, C, C},
	{`export PAGER='sh -c id'; git log`, "read_only,exec", "", "", "", true, C, C, C},
	{`declare -x LESSOPEN='|id'; less f`, "read_only,exec", "f", "", "", true, C, C, C},
	{`export FOO=1 && ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`PATH=/tmp/bin:$PATH; ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`IFS=x; ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`LANG=/tmp/loc ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`TERM=../x ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`env LESSOPEN='|id %s' less f`, "read_only,exec", "f", "", "", true, C, C, C},
	{`env NODE_OPTIONS=--inspect node a.js`, "exec", "a.js", "", "", true, C, C, C},
	{`declare "PATH=/tmp/bin"; ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`printf -v PATH %s /tmp/bin; ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`read -r PATH < f; ls`, "read_only,exec", ". f", "", "", true, C, C, C},
	{`for PATH in /tmp/bin; do ls; done`, "read_only,exec", ".", "", "", true, C, C, C},
	{`: ${LD_PRELOAD:=./x.so}; ls`, "read_only,exec", ".", "", "", true, C, C, C},
	{`(( IFS = 1 )); ls`, "read_only,exec", ".", "", "", true, C, C, C},
	// ... inert variables with inert values.
	{`env LANG=C sort f`, "read_only", "f", "", "", false, A, A, A},
	{`while IFS= read -r l; do echo "$l"; done < f`, "read_only", "f", "", "", false, A, A, A},
	{`GIT_TERMINAL_PROMPT=0 git status`, "read_only", "", "", "", false, A, A, A},
	{`GIT_EDITOR=true git status`, "read_only", "", "", "", false, A, A, A},
	{`GIT_EDITOR='sh -c id' git status`, "read_only,exec", "", "", "", true, C, C, C},
	{`IFS=/; ls $d`, "read_only,exec", "", "", "", true, C, C, C},
	{`LANG=C sort f`, "read_only", "f", "", "", false, A, A, A},
	{`LC_ALL=C.UTF-8 grep foo f`, "read_only", "f", "", "", false, A, A, A},
	{`TZ=UTC date`, "read_only", "", "", "", false, A, A, A},
	{`NO_COLOR=1 ls`, "read_only", ".", "", "", false, A, A, A},
	{`COLUMNS=80 ls`, "read_only", ".", "", "", false, A, A, A},
	{`PAGER=cat git log`, "read_only", "", "", "", false, A, A, A},
	{`GIT_PAGER=cat git log`, "read_only", "", "", "", false, A, A, A},
	{`CI=1 go test ./...`, "exec", "", "", "", false, A, C, A},
	{`x=1; echo $x`, "read_only", "", "", "", false, A, A, A},
	{`export LANG=C; ls`, "read_only", ".", "", "", false, A, A, A},
}

func TestExpansionTable(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"src", ".git", "config", "bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	gates := map[string]*gate.Gate{}
	for _, name := range []string{profile.ProfileDev, profile.PermissionSupervised, profile.PermissionAutonomous} {
		g, err := gate.New(profile.MustBuiltin(name), &gate.Options{Workspace: []string{ws}})
		require.NoError(t, err)
		gates[name] = g
	}
	seen := map[string]bool{}
	for _, r := range expansionTable {
		require.False(t, seen[r.line], "duplicate row %q", r.line)
		seen[r.line] = true
		an, err := shell.Analyze(r.line, &shell.Options{Dir: ws, Home: home, TempDir: "/tmp"})
		require.NoError(t, err, r.line)
		assert.Equal(t, r.risk, an.Risk.String(), "%q: risk", r.line)
		assert.Equal(t, r.reads, paths(an.Reads, ws, home), "%q: reads", r.line)
		assert.Equal(t, r.writes, paths(an.Writes, ws, home), "%q: writes", r.line)
		assert.Equal(t, r.hosts, hosts(an), "%q: hosts", r.line)
		assert.Equal(t, r.opaque, an.Opaque, "%q: opaque (%v)", r.line, why(an))
		if r.opaque {
			assert.NotEmpty(t, why(an), "%q: an opaque line says why", r.line)
		}
		for name, want := range map[string]policy.Verdict{profile.ProfileDev: r.dev, profile.PermissionSupervised: r.sup, profile.PermissionAutonomous: r.auto} {
			d, err := gates[name].Check(context.Background(), policy.Action{Tool: "bash", Operation: policy.OpShell, Command: r.line})
			require.NoError(t, err)
			assert.Equal(t, want, d.Verdict, "%q under %s: %s", r.line, name, d)
		}
	}
}

// TestReadmeExpansions: the two lines the issue names run an embedded command in bash; they and
// their variants are opaque, never read-only alone, and the reason names the expansion.
func TestReadmeExpansions(t *testing.T) {
	for _, line := range []string{
		`echo ${v@P}`, `v='$(touch m)'; echo ${v@P}`, `printf '%s\n' "${v@P}"`, `echo ${v@P} > out.txt`,
		`X='a[$(touch m)]'; echo $((X))`, `X='a[$(touch m)]'; echo $(( X + 1 ))`, `X='a[$(touch m)]'; (( X ))`,
		`X='a[$(touch m)]'; let X`, `X='a[$(touch m)]'; [[ X -eq 0 ]]`, `X='a[$(touch m)]'; [[ $X -eq 0 ]]`,
		`X='a[$(touch m)]'; echo ${a[X]}`, `X='a[$(touch m)]'; echo ${s:X}`, `X='a[$(touch m)]'; y=$((X))`,
		`X='a[$(touch m)]'; declare -i y=X`, `X='a[$(touch m)]'; a[X]=1`, `r='a[$(touch m)]'; echo ${!r}`,
	} {
		an, err := shell.Analyze(line, &shell.Options{Dir: "/w", Home: "/home/u"})
		require.NoError(t, err, line)
		assert.True(t, an.Opaque, "%q is opaque", line)
		assert.True(t, an.Risk.Has(risk.Exec), "%q may run anything: %s", line, an.Risk)
	}
}
