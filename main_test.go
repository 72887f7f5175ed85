//go:build unix

package reins_test

import (
	"fmt"
	"os"
	"testing"
)

// helperEnv selects a helper mode: the test binary re-executes itself as a child process (a
// run whose audit log hits a file size limit part way through a record).
const helperEnv = "REINS_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		var err error
		switch mode {
		case "audit-fsize":
			err = auditFsizeChild()
		default:
			err = fmt.Errorf("unknown helper mode %q", mode)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
