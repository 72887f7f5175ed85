package shell

// handler classifies one program's arguments.
type handler func(c *call)

var programs map[string]handler

func register(h handler, names ...string) {
	for _, n := range names {
		programs[n] = h
	}
}

// sedRisky reports whether a sed script has a command that writes a file (w, W, the s///w flag),
// reads one into the output (r, R) or runs a command (e, the s///e flag).
func sedRisky(s string) bool {
	skipDelimited := func(i int, delim byte) int { // returns the index after the closing delimiter
		for i < len(s) && s[i] != delim {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		return i + 1
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!' || c == ',' || c == '$' || c == '~' || c == '+' || (c >= '0' && c <= '9'):
			i++
		case c == '/':
			i = skipDelimited(i+1, '/')
		case c == '\\' && i+1 < len(s):
			i = skipDelimited(i+2, s[i+1])
		case c == 's' || c == 'y':
			if i+1 >= len(s) {
				return false
			}
			d := s[i+1]
			i = skipDelimited(i+2, d)
			i = skipDelimited(i, d)
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				if c == 's' && (s[i] == 'w' || s[i] == 'e') {
					return true
				}
				i++
			}
		case c == 'e' || c == 'w' || c == 'W' || c == 'r' || c == 'R':
			return true
		case c == 'a' || c == 'i' || c == 'c' || c == 'b' || c == 't' || c == 'T' || c == ':' || c == '#':
			for i < len(s) && s[i] != '\n' && (s[i] != ';' || c == 'a' || c == 'i' || c == 'c' || c == '#') {
				i++
			}
		default:
			i++
		}
	}
	return false
}

func init() {
	programs = map[string]handler{}
	registerReaders()
	registerWriters()
	registerRunners()
	registerInterpreters()
	registerWrappers()
	registerSystem()
	register(gitCmd, "git")
	registerNetwork()
	for name := range versionFlags {
		if h, ok := programs[name]; ok {
			programs[name] = withVersion(name, h)
		}
	}
}

// registerReaders registers the read-only programs: option tables and directory changes.
func registerReaders() {
	// Read only, by option table (tables.go).
	for name, t := range readOnlyTools {
		programs[name] = t.run
	}
	programs["echo"] = echo
	register(quietNoArgs, "true", "false", ":", "test", "[", "[[")
	registerBuiltins()
	programs["ps"] = ps
	programs["lsof"] = lsof
}
