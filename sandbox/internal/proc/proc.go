// Package proc runs one process for package sandbox and its backend
// sub-packages: in its own process group (or session), with capped
// output, a timeout, and the whole group killed when the leader exits or
// the run is cancelled.
package proc
