//go:build unix

package audit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
)

// appendChild appends REINS_AUDIT_N records to the shared log REINS_AUDIT_PATH as writer
// REINS_AUDIT_WRITER; record i of writer w has a decision id holding w and i.
func appendChild() error {
	n, err := strconv.Atoi(os.Getenv("REINS_AUDIT_N"))
	if err != nil {
		return err
	}
	w, err := strconv.Atoi(os.Getenv("REINS_AUDIT_WRITER"))
	if err != nil {
		return err
	}
	d, err := audit.ParseDurability(os.Getenv("REINS_AUDIT_DURABILITY"))
	if err != nil {
		return err
	}
	s, err := audit.OpenJSONL(os.Getenv("REINS_AUDIT_PATH"), &audit.JSONLOptions{
		Shared: true, Durability: d, MaxFileSize: 16 << 10})
	if err != nil {
		return err
	}
	for i := range n {
		r := audit.Sample(i)
		r.DecisionID = writerID(w, i)
		r.Tool = fmt.Sprintf("writer-%d", w)
		if err := s.Write(context.Background(), r); err != nil {
			return err
		}
	}
	return s.Close(context.Background())
}

func writerID(w, i int) uuid.UUID {
	var id uuid.UUID
	binary.BigEndian.PutUint32(id[0:], uint32(w))
	binary.BigEndian.PutUint32(id[4:], uint32(i))
	return id
}

// Several processes append to one log at once (with rotation): the merged log verifies and
// holds every record exactly once, each writer's records in the order it wrote them.
func TestJSONL_MultiProcess(t *testing.T) {
	tests := []struct {
		durability audit.Durability
		writers, n int
	}{
		{audit.DurabilityBuffered, 4, 300},
		{audit.DurabilityGroup, 3, 60},
	}
	for _, tt := range tests {
		t.Run(tt.durability.String(), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			cmds := make([]*exec.Cmd, tt.writers)
			outs := make([]*safeBuffer, tt.writers)
			for w := range cmds {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), helperEnv+"=append", "REINS_AUDIT_PATH="+path,
					"REINS_AUDIT_N="+strconv.Itoa(tt.n), "REINS_AUDIT_WRITER="+strconv.Itoa(w),
					"REINS_AUDIT_DURABILITY="+tt.durability.String())
				outs[w] = &safeBuffer{}
				cmd.Stdout, cmd.Stderr = outs[w], outs[w]
				require.NoError(t, cmd.Start())
				cmds[w] = cmd
			}
			for w, cmd := range cmds {
				require.NoError(t, cmd.Wait(), "writer %d: %s", w, outs[w])
			}

			res, err := audit.Verify(path)
			require.NoError(t, err)
			assert.Nil(t, res.Torn)
			assert.Equal(t, tt.writers*tt.n, res.Records)
			assert.Greater(t, len(res.Files), 1, "the log rotated")

			next := make([]int, tt.writers) // each writer's next expected record
			for _, r := range scanAll(t, path, nil) {
				w := int(binary.BigEndian.Uint32(r.DecisionID[0:]))
				i := int(binary.BigEndian.Uint32(r.DecisionID[4:]))
				require.Less(t, w, tt.writers)
				require.Equal(t, next[w], i, "writer %d: record %d out of order or repeated", w, i)
				require.Equal(t, fmt.Sprintf("writer-%d", w), r.Tool)
				next[w]++
			}
			for w, n := range next {
				assert.Equal(t, tt.n, n, "writer %d", w)
			}
		})
	}
}
