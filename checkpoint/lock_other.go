//go:build !unix

package checkpoint

import (
	"context"
	"errors"
	"fmt"
)

// lock is not implemented on this platform: without a cross-process lock
// the package refuses to run rather than risk interleaved restores.
func (c *Checkpointer) lock(context.Context) (func(), error) {
	return nil, fmt.Errorf("checkpoint: workspace locking: %w", errors.ErrUnsupported)
}
