package loader_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
)

func TestWatchReloadsOnChange(t *testing.T) {
	t.Parallel()
	userDir := t.TempDir()
	l, err := loader.New(&loader.Options{UserDir: userDir})
	require.NoError(t, err)
	user, _ := l.Paths()
	_, err = l.Load(context.Background()) // what Watch compares with
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type event struct {
		name string
		err  error
	}
	events := make(chan event, 4)
	done := make(chan error, 1)
	go func() {
		done <- l.Watch(ctx, 10*time.Millisecond, func(ld *loader.Loaded, err error) {
			e := event{err: err}
			if ld != nil {
				e.name = ld.Profile.Name
			}
			events <- e
		})
	}()
	next := func() event {
		select {
		case e := <-events:
			return e
		case <-time.After(5 * time.Second):
			t.Fatal("no reload after a change")
			return event{}
		}
	}
	require.NoError(t, os.WriteFile(user, []byte(`{"active_profile": "PROFILE-DEV"}`), 0o600))
	e := next()
	require.NoError(t, e.err)
	assert.Equal(t, profile.Dev.Name(), e.name)
	require.NoError(t, os.WriteFile(user, []byte(`{"active_profile": 7}`), 0o600))
	e = next()
	assert.Error(t, e.err, "an invalid file is reported; the host keeps its profile")
	require.NoError(t, os.Remove(user))
	e = next()
	require.NoError(t, e.err)
	assert.Equal(t, profile.Safe.Name(), e.name, "without a file, the default")
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}
