package hookwire

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A call and an answer read back as they were written; a frame cut anywhere is an error.
func TestFramesRoundTrip(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCall(&b, []byte(`{"tool_name":"Read"}`)))
	in, err := ReadCall(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, `{"tool_name":"Read"}`, string(in))
	for n := range b.Len() {
		_, err := ReadCall(bytes.NewReader(b.Bytes()[:n]))
		assert.Error(t, err, "a call cut at %d bytes", n)
	}

	b.Reset()
	want := Answer{Code: 2, Stdout: []byte("{}\n"), Stderr: []byte("reins hook: blocked\n")}
	require.NoError(t, WriteAnswer(&b, want))
	got, err := ReadAnswer(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	for n := range b.Len() {
		_, err := ReadAnswer(bytes.NewReader(b.Bytes()[:n]))
		assert.Error(t, err, "an answer cut at %d bytes", n)
	}
}

// Sizes are bounded before anything is allocated: a call larger than MaxInput+1 bytes and an
// answer larger than maxOutput are refused from their headers.
func TestFramesAreBounded(t *testing.T) {
	hdr := binary.BigEndian.AppendUint32([]byte(magic), MaxInput+2)
	_, err := ReadCall(bytes.NewReader(hdr))
	assert.ErrorContains(t, err, "larger than")
	ans := append([]byte(magic), 0)
	ans = binary.BigEndian.AppendUint32(ans, maxOutput+1)
	_, err = ReadAnswer(bytes.NewReader(ans))
	assert.ErrorContains(t, err, "larger than")
	_, err = ReadCall(strings.NewReader("HTTP/1.1 200 OK\r\n"))
	assert.ErrorContains(t, err, "not a reins-hook call")
}

// Situations that differ in anything get different sockets; the order of the environment does
// not matter.
func TestSocketPath(t *testing.T) {
	base := SocketPath("/s", "/bin/core", []byte("id"), []string{"claude"}, []string{"A=1", "B=2"}, "/w", 1000)
	assert.True(t, strings.HasPrefix(base, "/s/daemon/") && strings.HasSuffix(base, ".sock"), base)
	assert.Equal(t, base, SocketPath("/s", "/bin/core", []byte("id"), []string{"claude"}, []string{"B=2", "A=1"}, "/w", 1000))
	for name, other := range map[string]string{
		"core":  SocketPath("/s", "/bin/core2", []byte("id"), []string{"claude"}, []string{"A=1", "B=2"}, "/w", 1000),
		"id":    SocketPath("/s", "/bin/core", []byte("id2"), []string{"claude"}, []string{"A=1", "B=2"}, "/w", 1000),
		"args":  SocketPath("/s", "/bin/core", []byte("id"), []string{"gemini"}, []string{"A=1", "B=2"}, "/w", 1000),
		"split": SocketPath("/s", "/bin/core", []byte("id"), []string{"cl", "aude"}, []string{"A=1", "B=2"}, "/w", 1000),
		"env":   SocketPath("/s", "/bin/core", []byte("id"), []string{"claude"}, []string{"A=1", "B=3"}, "/w", 1000),
		"cwd":   SocketPath("/s", "/bin/core", []byte("id"), []string{"claude"}, []string{"A=1", "B=2"}, "/x", 1000),
		"uid":   SocketPath("/s", "/bin/core", []byte("id"), []string{"claude"}, []string{"A=1", "B=2"}, "/w", 1001),
	} {
		assert.NotEqual(t, base, other, name)
	}
}

// Getenv finds the last definition, as a process's environment does, and no prefix of a name.
func TestGetenv(t *testing.T) {
	env := []string{"HOME=/a", "HOMEDIR=/b", "X=", "HOME=/c"}
	assert.Equal(t, "/c", Getenv(env, "HOME"))
	assert.Equal(t, "/b", Getenv(env, "HOMEDIR"))
	assert.Equal(t, "", Getenv(env, "X"))
	assert.Equal(t, "", Getenv(env, "HOM"))
	assert.Equal(t, "", Getenv(env, "Y"))
}

// FuzzFrames: no input makes the readers panic or allocate past their bounds, and what they
// accept writes back to the same bytes.
func FuzzFrames(f *testing.F) {
	var b bytes.Buffer
	_ = WriteCall(&b, []byte(`{"a":1}`))
	f.Add(b.Bytes())
	b.Reset()
	_ = WriteAnswer(&b, Answer{Code: 0, Stdout: []byte("x"), Stderr: nil})
	f.Add(b.Bytes())
	f.Add([]byte("RHD1\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if in, err := ReadCall(bytes.NewReader(data)); err == nil {
			require.LessOrEqual(t, len(in), MaxInput+1)
			var out bytes.Buffer
			require.NoError(t, WriteCall(&out, in))
			require.Equal(t, data[:out.Len()], out.Bytes())
		}
		if a, err := ReadAnswer(bytes.NewReader(data)); err == nil {
			require.LessOrEqual(t, len(a.Stdout)+len(a.Stderr), maxOutput)
			var out bytes.Buffer
			require.NoError(t, WriteAnswer(&out, a))
			require.Equal(t, data[:out.Len()], out.Bytes())
		}
	})
}
