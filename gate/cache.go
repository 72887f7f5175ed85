package gate

import (
	"maps"
	"sync/atomic"

	"github.com/reins-go/reins/risk/shell"
)

// maxCachedAnalyses bounds the per-profile cache of command-line analyses.
const maxCachedAnalyses = 512

type cachedAnalysis struct {
	dir string
	an  *shell.Analysis
	err error // the line does not parse (or is too long to analyse)
}

// analysisCache maps a command line to its analysis. Reads are a lock-free lookup in an immutable
// map; a store copies the map (at most maxCachedAnalyses entries, then it starts afresh), so an
// agent repeating "go test ./..." pays for the parse once.
type analysisCache struct {
	p atomic.Pointer[map[string]cachedAnalysis]
}

func (c *analysisCache) load(line string) (cachedAnalysis, bool) {
	m := c.p.Load()
	if m == nil {
		return cachedAnalysis{}, false
	}
	v, ok := (*m)[line]
	return v, ok
}

func (c *analysisCache) store(line string, v cachedAnalysis) {
	for {
		old := c.p.Load()
		var n map[string]cachedAnalysis
		if old == nil || len(*old) >= maxCachedAnalyses {
			n = make(map[string]cachedAnalysis, 1)
		} else {
			n = maps.Clone(*old)
		}
		n[line] = v
		if c.p.CompareAndSwap(old, &n) {
			return
		}
	}
}
