package reins

import "time"

// Clock tells a run the time and runs its timers: decision ids and record times, grant expiry,
// the wall-time meter, the approval timeout and the profile's operation timeout. The system
// clock is the default; tests inject a fake one (reinstest.Clock) and advance it instead of
// sleeping.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has elapsed, unless stop is called first
	// (stop reports whether it prevented the call), as time.AfterFunc does.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// systemClock is the real time.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
