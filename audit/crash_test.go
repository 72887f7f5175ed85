//go:build unix

package audit_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
)

// crashChild appends records to REINS_AUDIT_PATH with sync durability, printing each record's
// id once Write has returned (acknowledged), until it is killed.
func crashChild() error {
	s, err := audit.OpenJSONL(os.Getenv("REINS_AUDIT_PATH"), &audit.JSONLOptions{
		Durability: audit.DurabilitySync, MaxFileSize: 8 << 10})
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		r := audit.Sample(i)
		r.DecisionID = uuid.Must(uuid.NewV7())
		if err := s.Write(context.Background(), r); err != nil {
			return err
		}
		fmt.Fprintln(out, r.DecisionID)
		if err := out.Flush(); err != nil {
			return err
		}
	}
}

// A writer with sync durability is killed with SIGKILL at a random moment: every record it
// acknowledged is in the log, the chain verifies up to a possibly torn last line, and the
// log reopens and appends after it.
func TestJSONL_CrashSIGKILL(t *testing.T) {
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=crash", "REINS_AUDIT_PATH="+path)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr safeBuffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())

			var mu sync.Mutex
			var acked []uuid.UUID
			done := make(chan struct{})
			go func() {
				defer close(done)
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					id, err := uuid.Parse(sc.Text())
					if err != nil {
						t.Errorf("child printed %q", sc.Text())
						continue
					}
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}()
			// Let it write a few records, then kill it at a random moment.
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(acked) >= 5
			}, 30*time.Second, time.Millisecond, "child wrote nothing: %s", &stderr)
			time.Sleep(time.Duration(rand.IntN(60_000)) * time.Microsecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			<-done
			err = cmd.Wait()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "stderr: %s", &stderr)
			require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())

			res, err := audit.Verify(path)
			require.NoError(t, err, "the chain verifies up to a possibly torn last line")
			if res.Torn != nil {
				t.Logf("torn last line: %v", res.Torn)
			}
			present := map[uuid.UUID]bool{}
			for r, err := range audit.Scan(path, nil) {
				if errors.Is(err, audit.ErrTorn) {
					continue
				}
				require.NoError(t, err)
				present[r.DecisionID] = true
			}
			require.NotEmpty(t, acked)
			for _, id := range acked {
				assert.True(t, present[id], "acknowledged record %s is missing", id)
			}
			assert.GreaterOrEqual(t, res.Records, len(acked))
			assert.LessOrEqual(t, res.Records, len(acked)+1, "at most the record in flight was written but not acknowledged")
			t.Logf("%d records acknowledged, %d in %d files", len(acked), res.Records, len(res.Files))

			s, err := audit.OpenJSONL(path, &audit.JSONLOptions{Durability: audit.DurabilitySync, MaxFileSize: 8 << 10})
			require.NoError(t, err)
			writeN(t, s, 0, 3)
			require.NoError(t, s.Close(context.Background()))
			after, err := audit.Verify(path)
			require.NoError(t, err)
			assert.Nil(t, after.Torn)
			want := res.Records + 3
			if res.Torn != nil {
				want++ // the recovery record
			}
			assert.Equal(t, want, after.Records)
		})
	}
}

// safeBuffer is a bytes.Buffer safe for the concurrent writes of exec and reads of a test.
type safeBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	return len(p), nil
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}
