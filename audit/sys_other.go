//go:build !linux

package audit

import "os"

func fdatasync(f *os.File) error { return f.Sync() }

func renameNoReplace(oldpath, newpath string) error { return linkRename(oldpath, newpath) }
