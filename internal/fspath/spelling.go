package fspath

import "strings"

// Spellings a tool may expand before it opens a path. A target is handed to a tool as written:
// one that runs it through a shell, or calls a home or variable expansion of its own, opens the
// expanded path; one that does not opens the literal name. Resolution reads a target the way
// the expanding tool does where that reading is well defined, and refuses it where it is not,
// so the literal reading (a directory named "~" in the workspace) never decides alone.
//
//   - "~" and "~/..." are the home directory, as a shell expands them (refused when the home
//     directory is unknown).
//   - "$HOME", "${HOME}" and "$HOME/...", "${HOME}/..." likewise.
//   - Any other "~" prefix ("~user", "~+", "~-", "~1") is refused: a shell expands it from the
//     account database or its own state, which the gate does not consult.
//   - Any other "$" at the start of the target followed by something other than "/" ("$TMPDIR/x",
//     "${XDG_CONFIG_HOME}/x", "$(pwd)/x", "$'\x2e'env") is refused: an expanding tool roots the
//     path at the variable's value, which may be absolute (another directory, a credential file
//     named by the environment).
//
// A "$" later in a target is taken literally. There, an expansion only replaces names below the
// literal directories before it (a value of "/etc" in "a/$X" joins to "a//etc"), unless the
// host's own environment holds a "..", and a literal "$" is common in real file names (Java's
// Outer$Inner.class).

// Spell returns p (in slash form) with a leading "~" or "$HOME" replaced by the home directory,
// or an [*AmbiguousError] for any other leading "~" or "$" expansion, by the rules
// [Workspace.Resolve] applies to targets; other paths are returned as they are. It serves what
// is not resolved as a target but names a place all the same, such as the working directory a
// command starts in.
func (w *Workspace) Spell(p string) (string, error) {
	t, err := w.spell(w.pl.ToSlash(p))
	if err != nil {
		err.(*AmbiguousError).Target = p
	}
	return t, err
}

// spell returns slash-form t with a leading home spelling replaced by w's home directory, or an
// [*AmbiguousError] for a leading spelling whose expansion the gate cannot know. Other targets
// are returned unchanged, without allocating.
func (w *Workspace) spell(t string) (string, error) {
	if t == "" || t[0] != '~' && t[0] != '$' {
		return t, nil
	}
	if t[0] == '$' && (len(t) == 1 || t[1] == '/') {
		return t, nil // a lone "$" is not an expansion
	}
	isHome, rest, ok := splitHome(t)
	switch {
	case ok && isHome && w.home == "":
		return "", &AmbiguousError{Why: "a shell expands a leading " + homeWord(t) + " to the home directory, which is unknown"}
	case ok && isHome:
		if rest == "" {
			return w.home, nil
		}
		return strings.TrimRight(w.home, "/") + "/" + rest, nil
	case t[0] == '~':
		return "", &AmbiguousError{Why: `a shell expands a leading "~name" (~user, ~+, ~-) from the account database or its own state, a tool that does not expand it reads a directory of that name`}
	}
	return "", &AmbiguousError{Why: `a leading "$" is a shell expansion: a tool that expands it roots the path at a value the gate does not know, one that does not reads a directory of that name`}
}

func homeWord(t string) string {
	if t[0] == '~' {
		return `"~"`
	}
	return `"$HOME"`
}
