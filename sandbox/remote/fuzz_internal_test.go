package remote

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// FuzzQuoteArgRoundTrip checks that a bash parser reads every quoted
// argument back as exactly the original bytes.
func FuzzQuoteArgRoundTrip(f *testing.F) {
	for _, s := range hostileArgs {
		f.Add(s)
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, s string) {
		q, err := quoteArg(s)
		if strings.IndexByte(s, 0) >= 0 {
			require.Error(t, err, "a NUL byte cannot be quoted")
			return
		}
		require.NoError(t, err)
		file, err := parser.Parse(strings.NewReader("x "+q), "")
		require.NoError(t, err, "quoted %q as %s", s, q)
		require.Len(t, file.Stmts, 1)
		call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
		require.True(t, ok)
		require.Len(t, call.Args, 2, "quoted %q as %s: one word", s, q)
		got, err := expand.Literal(&expand.Config{}, call.Args[1])
		require.NoError(t, err)
		assert.Equal(t, s, got, "quoted as %s", q)
	})
}

// FuzzFrame feeds a framed stream in arbitrary pieces: the command's
// output, its truncation and the closing line must come out the same.
func FuzzFrame(f *testing.F) {
	f.Add([]byte("hello"), []byte("banner\n"), []byte("bye\n"), uint8(3), 4)
	f.Add([]byte(""), []byte(""), []byte(""), uint8(1), 0)
	f.Add([]byte("no newline at end"), []byte("x"), []byte(""), uint8(7), 100)
	f.Add([]byte("reinsX:exit:9\n"), []byte("reinsX:start\n"), []byte("\n"), uint8(2), 5)
	const nonce = "reins00112233445566778899aabb"
	f.Fuzz(func(t *testing.T, content, before, after []byte, chunk uint8, max int) {
		if max < 0 || max > 1<<16 || len(after) > frameTail/2 {
			return
		}
		mark := []byte(nonce + ":")
		if bytes.Contains(content, mark) || bytes.Contains(before, mark) || bytes.Contains(after, mark) {
			return // only the backend's script knows the nonce
		}
		fr := newFrame(nonce, max)
		stream := append(append(append(append(append([]byte(nil), before...), "\n"+nonce+":start:123\n"...), content...), nonce+":exit:42\n"...), after...)
		step := int(chunk%16) + 1
		for i := 0; i < len(stream); i += step {
			_, _ = fr.Write(stream[i:min(i+step, len(stream))])
		}
		r := fr.result()
		require.True(t, r.started)
		require.True(t, r.ended)
		assert.Equal(t, "exit:42", r.kind)
		want := content
		if len(want) > max {
			want = want[:max]
		}
		assert.Equal(t, string(want), string(r.out))
		assert.Equal(t, len(content) > max, r.truncated)
		arg, ok := fr.startArgNow()
		assert.True(t, ok)
		assert.Equal(t, "123", arg)
	})
}

// FuzzParseFiles feeds arbitrary bytes to the parser of the daytona
// output sections; it must never panic, and accepts only both sections.
func FuzzParseFiles(f *testing.F) {
	f.Add([]byte("n:out1:3\naGk=\nn:out2:0\n"), 10)
	f.Add([]byte("n:out1:x\n"), 1)
	f.Add([]byte("garbage"), 0)
	f.Fuzz(func(t *testing.T, body []byte, _ int) {
		r, ok := parseFiles(body, "n")
		if ok {
			assert.NotNil(t, r)
		}
	})
}

// FuzzLexicalWorkdir checks the working-directory check of the remote
// backends: an accepted directory is inside the root and names no
// denied path.
func FuzzLexicalWorkdir(f *testing.F) {
	for _, s := range []string{"", "sub", "..", "/", "sub/../..", ".git", "a/.GIT/b", "/w/x", "/w/../w/x", "./.", "a//b/", "x/.env.local"} {
		f.Add(s)
	}
	m, err := pathmatch.New([]string{"secrets"}, nil)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, dir string) {
		got, vs := lexicalWorkdir("/w", m, dir)
		if len(vs) > 0 {
			assert.Empty(t, got)
			return
		}
		assert.True(t, fspath.Within(got, "/w"), "lexicalWorkdir(%q) = %q", dir, got)
		_, denied := m.Match(got)
		assert.False(t, denied, "lexicalWorkdir(%q) = %q", dir, got)
	})
}
