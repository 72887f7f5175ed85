//go:build !unix

package checkpoint

import "errors"

const oNoFollow = 0

var errNotDir = errors.New("not a directory")
