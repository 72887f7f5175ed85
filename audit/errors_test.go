package audit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reins-go/reins/audit"
)

// TestSentinelsNamePackage: every sentinel says it comes from audit, once, also inside a LineError.
func TestSentinelsNamePackage(t *testing.T) {
	for _, err := range []error{audit.ErrTorn, audit.ErrMalformed, audit.ErrAltered, audit.ErrBrokenChain, audit.ErrInUse, audit.ErrClosed} {
		assert.True(t, strings.HasPrefix(err.Error(), "audit: "), err.Error())
		le := &audit.LineError{File: "log.jsonl", Line: 3, Err: err}
		assert.Equal(t, 1, strings.Count(le.Error(), "audit: "), le.Error())
		assert.True(t, strings.HasPrefix(le.Error(), "audit: log.jsonl:3: "), le.Error())
		assert.True(t, errors.Is(le, err))
	}
}
