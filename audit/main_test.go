//go:build unix

package audit_test

import (
	"fmt"
	"os"
	"testing"
)

// helperEnv selects a helper mode: the test binary re-executes itself as a child process (a
// writer that is killed, one of several concurrent writers, a writer with a file size limit).
const helperEnv = "REINS_AUDIT_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		var err error
		switch mode {
		case "crash":
			err = crashChild()
		case "append":
			err = appendChild()
		case "fsize":
			err = fsizeChild()
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
