package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentLoop(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	s := out.String()
	for _, want := range []string{
		"a refactor that breaks the build  ALLOW    failed, rolled back",
		"clean the build directory         ALLOW    ran",
		"publish with force                DENY     not run",
		"peek at the secrets               DENY     not run",
		"carry on after the hard stop      DENY     not run",
		"after the rollback, extra.txt exists: false",
		"the build script's write outside the workspace landed: false",
		"hash chain verifies",
	} {
		assert.Contains(t, s, want)
	}
}
