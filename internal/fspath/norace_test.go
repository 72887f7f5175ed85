//go:build !race

package fspath

const raceEnabled = false
