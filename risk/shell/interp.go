package shell

import (
	"strings"

	"github.com/reins-go/reins/risk"
)

// shellProg is sh, bash and the shells whose syntax the analysis reads: -c scripts are parsed
// recursively; a script file runs code from a file; no script means code from standard input.
func shellProg(c *call) {
	args := c.args
	if c.name == "busybox" {
		if len(args) == 0 || !args[0].lit {
			c.opaque("busybox applet not known")
			c.risk(risk.Exec)
			return
		}
		if !args[0].is("sh", "ash", "bash") {
			c.rewrap(args, "busybox")
			return
		}
		args = args[1:]
	}
	c.risk(risk.Exec)
	var script *arg
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			break
		}
		if a.val == "--" || a.val == "-" {
			i++
			break
		}
		if !strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val, "+") {
			break
		}
		if a.is("-o", "+o", "-O", "+O", "--rcfile", "--init-file") {
			i++
			continue
		}
		if strings.HasPrefix(a.val, "--") {
			continue
		}
		if strings.Contains(a.val, "c") && strings.HasPrefix(a.val, "-") {
			if i+1 < len(args) {
				s := args[i+1]
				script = &s
			}
			break
		}
		if strings.Contains(a.val, "s") && strings.HasPrefix(a.val, "-") {
			c.stdinCode(true)
			return
		}
	}
	switch {
	case script != nil && !script.lit:
		c.cmd.ExecutesCode = true
		c.opaque(c.name + " -c runs a script the line does not spell out")
	case script != nil:
		c.code(script.val, true, c.name+" -c")
	case i < len(args):
		c.read(args[i]) // a script file: it runs whatever the file holds
		c.note(c.name + " runs the script file " + args[i].val)
	default:
		c.stdinCode(true)
	}
}

// foreignShell is a shell whose syntax the analysis does not read.
func foreignShell(c *call) {
	c.risk(risk.Exec)
	c.cmd.ExecutesCode = true
	c.opaque(c.name + " scripts are not analysed")
}

// interpreter handles python, node, perl, ruby and the like: code flags (-c, -e) hand it code;
// module flags (-m) run a module; otherwise the first positional is a script file.
func interpreter(codeFlags, valueFlags string) handler {
	return func(c *call) {
		c.risk(risk.Exec)
		args := c.args
		inPlace := false
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.lit {
				c.opaque("an interpreter argument is not literal")
				return
			}
			if a.val == "-" {
				c.stdinCode(false)
				return
			}
			if !strings.HasPrefix(a.val, "-") || a.val == "--" {
				if a.val == "--" {
					i++
				}
				if i < len(args) {
					c.read(args[i])
					c.note(c.name + " runs the script file " + args[i].val)
				}
				return
			}
			flag := strings.TrimLeft(a.val, "-")
			if strings.HasPrefix(a.val, "--") {
				switch flag {
				case "eval", "print", "command":
					c.code("", false, c.name+" "+a.val)
					return
				}
				continue
			}
			for j := 0; j < len(flag); j++ {
				ch := flag[j]
				if ch == 'i' && (c.name == "perl" || c.name == "ruby") {
					inPlace = true
				}
				switch {
				case strings.IndexByte(codeFlags, ch) >= 0:
					c.code("", false, c.name+" -"+string(ch))
					if inPlace && j == len(flag)-1 && i+2 <= len(args) {
						// perl -pi -e CODE files: edits the files in place.
						c.risk(risk.Mutating)
						c.writeAll(args[i+2:])
					}
					return
				case ch == 'm' && strings.HasPrefix(c.name, "py"):
					mod := flag[j+1:]
					rest := args[i+1:]
					if mod == "" && len(rest) > 0 {
						mod, rest = rest[0].val, rest[1:]
					}
					pythonModule(c, mod, rest)
					return
				case strings.IndexByte(valueFlags, ch) >= 0:
					if j == len(flag)-1 {
						i++
					}
					j = len(flag)
				}
			}
		}
		c.stdinCode(false)
	}
}

func pythonModule(c *call, mod string, rest []arg) {
	switch mod {
	case "pip":
		c.args = rest
		c.name = "pip"
		pip(c)
	case "pytest", "unittest", "doctest", "mypy", "pylint", "black", "ruff", "tox", "nox", "build", "compileall", "py_compile", "timeit", "cProfile", "pdb":
		c.risk(risk.Exec)
		if mod == "black" || mod == "ruff" {
			c.risk(risk.Mutating)
			c.cwd(true)
		}
	case "venv", "virtualenv":
		c.risk(risk.Mutating)
		c.writeAll(rest)
	case "http.server", "SimpleHTTPServer":
		c.risk(risk.Network)
		c.cmd.Network = true
		c.note("serves the working directory over HTTP")
	case "json.tool", "tabnanny", "site", "this":
		c.risk(risk.ReadOnly)
	default:
		c.risk(risk.Exec)
	}
}
