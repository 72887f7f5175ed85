//go:build !unix

package gitcfg_test

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this platform") }
