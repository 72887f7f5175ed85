package gitcfg_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/gitcfg"
)

func entries(t *testing.T, src string) ([]string, error) {
	t.Helper()
	var out []string
	err := gitcfg.Parse([]byte(src), func(e gitcfg.Entry) error {
		if e.NoValue {
			out = append(out, e.Key())
		} else {
			out = append(out, e.Key()+"="+e.Value)
		}
		return nil
	})
	return out, err
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
		err       bool
	}{
		{"simple", "[core]\n\tfsmonitor = ./x.sh\n", []string{"core.fsmonitor=./x.sh"}, false},
		{"case-insensitive names", "[CoRe]\n\tFsMonitor = X\n", []string{"core.fsmonitor=X"}, false},
		{"quoted subsection keeps case", "[diff \"Foo\"]\n\ttextconv = cat\n", []string{"diff.Foo.textconv=cat"}, false},
		{"dotted subsection is lower-cased", "[diff.Foo]\n\ttextconv = cat\n", []string{"diff.foo.textconv=cat"}, false},
		{"subsection escapes", "[a \"x\\\"y\\\\z\"]\nk=v\n", []string{`a.x"y\z.k=v`}, false},
		{"bare name is true", "[core]\n\tbare\n", []string{"core.bare"}, false},
		{"key on the header line", "[core] pager = less\n", []string{"core.pager=less"}, false},
		{"comments", "# c\n; c\n[core] ; c\n\tpager = less # c\n", []string{"core.pager=less"}, false},
		{"quotes keep comment chars and spaces", "[a]\nk = \" x # y ; \"\n", []string{"a.k= x # y ; "}, false},
		{"inner spaces kept, trailing dropped", "[a]\nk =  x  y  \n", []string{"a.k=x  y"}, false},
		{"escapes", "[a]\nk = a\\tb\\nc\\\\d\\\"e\n", []string{"a.k=a\tb\nc\\d\"e"}, false},
		{"continuation", "[a]\nk = one \\\ntwo\n", []string{"a.k=one two"}, false},
		{"crlf", "[a]\r\nk = v\r\n", []string{"a.k=v"}, false},
		{"bom", "\xef\xbb\xbf[a]\nk=v\n", []string{"a.k=v"}, false},
		{"no final newline", "[a]\nk=v", []string{"a.k=v"}, false},
		{"empty value", "[a]\nk=\n", []string{"a.k="}, false},
		{"dashes and digits", "[a-b]\nk-2=v\n", []string{"a-b.k-2=v"}, false},
		{"several sections", "[a]\nx=1\n[b \"s\"]\ny=2\n[a]\nz=3\n", []string{"a.x=1", "b.s.y=2", "a.z=3"}, false},
		{"variable before any section", "k=v\n", []string{"k=v"}, false},
		{"unterminated header", "[core\n", nil, true},
		{"bad header char", "[co/re]\n", nil, true},
		{"unterminated subsection", "[a \"x]\n", nil, true},
		{"junk after subsection", "[a \"x\" ]\n", nil, true},
		{"unterminated quote", "[a]\nk = \"x\n", nil, true},
		{"bad escape", "[a]\nk = \\q\n", nil, true},
		{"name must start with a letter", "[a]\n1k = v\n", nil, true},
		{"comment after a bare name", "[a]\nk # c\n", nil, true},
		{"missing equals", "[a]\nk v\n", nil, true},
		{"empty section", "[]\n", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := entries(t, c.src)
			if c.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "line ")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestRunsProgram(t *testing.T) {
	for _, c := range []struct {
		src  string
		runs bool
	}{
		{"[core]\nfsmonitor = .git/x.sh", true},
		{"[core]\nfsmonitor = true", true}, // starts git's own monitor daemon (issue 22),
		{"[core]\nfsmonitor = false", false},
		{"[core]\nfsmonitor", true},
		{"[core]\npager = less -R", true},
		{"[core]\npager = cat", false},
		{"[core]\neditor = vim", true},
		{"[core]\nsshCommand = ssh -i k", true},
		{"[core]\naskPass = x", true},
		{"[core]\ngitProxy = x", true},
		{"[core]\nhooksPath = hooks", true},
		{"[core]\nalternateRefsCommand = x", true},
		{"[core]\nworktree = /", true},
		{"[core]\nfilemode = true\nbare = false\nrepositoryformatversion = 0\nlogallrefupdates = true", false},
		{"[diff]\nexternal = x", true},
		{"[diff \"png\"]\ntextconv = exif", true},
		{"[diff \"png\"]\ncommand = x", true},
		{"[diff \"png\"]\nbinary = true\nxfuncname = x", false},
		{"[filter \"lfs\"]\nclean = git-lfs clean -- %f", true},
		{"[filter \"x\"]\nsmudge = x", true},
		{"[filter \"x\"]\nprocess = x", true},
		{"[filter \"x\"]\nrequired = true", false},
		{"[merge \"x\"]\ndriver = x %A", true},
		{"[alias]\nst = status", false},
		{"[alias]\nst = !sh -c x", true},
		{"[alias]\nst = \" !x\"", true},
		{"[credential]\nhelper = store", true},
		{"[credential \"https://h\"]\nhelper = x", true},
		{"[gpg]\nprogram = x", true},
		{"[gpg \"ssh\"]\nprogram = x", true},
		{"[gpg \"ssh\"]\ndefaultKeyCommand = x", true},
		{"[sequence]\neditor = x", true},
		{"[pager]\nlog = x", true},
		{"[pager]\nlog = false", false},
		{"[interactive]\ndiffFilter = x", true},
		{"[uploadpack]\npackObjectsHook = x", true},
		{"[protocol \"ext\"]\nallow = always", true},
		{"[protocol \"ext\"]\nallow = never", false},
		{"[protocol \"https\"]\nallow = always", false},
		{"[protocol]\nallow = always", true},
		{"[remote \"o\"]\nuploadpack = x", true},
		{"[remote \"o\"]\nreceivepack = x", true},
		{"[remote \"o\"]\nurl = ext::sh -c x", true},
		{"[remote \"o\"]\nurl = https://example.invalid/r.git\nfetch = +refs/heads/*:refs/remotes/o/*", false},
		{"[url \"ext::sh -c x\"]\ninsteadOf = https://", true},
		{"[http]\nproxy = http://p", true},
		{"[submodule \"s\"]\nupdate = !x", true},
		{"[submodule \"s\"]\nupdate = rebase\nurl = ../s", false},
		{"[tar \"tgz\"]\ncommand = x", true},
		{"[hook \"h\"]\ncommand = x\nevent = pre-commit", true},
		{"[something]\nfancyCommand = x", true},
		{"[something]\nwrapperCmd = x", true},
		{"[user]\nname = n\nemail = e", false},
		{"[branch \"main\"]\nremote = origin\nmerge = refs/heads/main", false},
		{"[include]\npath = x", false},
		{"[core]\nfsmonitor = false", false},
		{"[log]\nshowSignature = true", true},
		{"[log]\nshowSignature = false", false},
		{"[log]\nshowSignature", true},
		{"[extensions]\npartialClone = origin", true},
		{"[remote \"origin\"]\npromisor = true", true},
		{"[remote \"origin\"]\npromisor = false", false},
		{"[remote \"origin\"]\npartialclonefilter = blob:none", true},
		{"[pretty]\nsig = format:%h %G?", true},
		{"[pretty]\nshort = format:%h %s", false},
		{"[format]\npretty = %H %GS", true},
		{"[format]\npretty = oneline", false},
	} {
		var whys []string
		require.NoError(t, gitcfg.Parse([]byte(c.src), func(e gitcfg.Entry) error {
			if why := gitcfg.RunsProgram(e); why != "" {
				whys = append(whys, e.Key()+": "+why)
			}
			return nil
		}), c.src)
		assert.Equal(t, c.runs, len(whys) > 0, "%q: %v", c.src, whys)
	}
}

// FuzzParse: Parse never panics, reports line numbers in its errors, and a file that parses
// parses the same way twice with every entry's names lower-case.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "[core]\n\tfsmonitor = x\n", "[diff \"a\\\"b\"]\n\ttextconv = \"c ; d\" # e\n", "[a.B]\nk\n",
		"[a]\nk = x\\\ny\n", "[a] k = v", "\xef\xbb\xbf[a]\r\nk=v\r\n", "[", "[a \"", "[a]\nk=\"", "[a]\nk=\\",
		"[include]\npath = ~/x\n[includeIf \"gitdir:/x/\"]\npath = y\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var first []gitcfg.Entry
		err := gitcfg.Parse(data, func(e gitcfg.Entry) error {
			require.Equal(t, strings.ToLower(e.Section), e.Section)
			require.Equal(t, strings.ToLower(e.Name), e.Name)
			require.NotEmpty(t, e.Name)
			require.GreaterOrEqual(t, e.Line, 1)
			_ = gitcfg.RunsProgram(e)
			first = append(first, e)
			return nil
		})
		if err != nil {
			require.Contains(t, err.Error(), "line ")
			return
		}
		var second []gitcfg.Entry
		require.NoError(t, gitcfg.Parse(data, func(e gitcfg.Entry) error { second = append(second, e); return nil }))
		require.Equal(t, first, second)
	})
}
