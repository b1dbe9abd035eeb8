package typed

import (
	"strings"
	"unicode"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// target is what a piece of text is about: a name and what kind of thing it is.
type target struct {
	name string
	// typ is "file", "directory", "function", "type", "module", "variable", "endpoint" or
	// "symbol".
	typ string
}

// kindNouns map a noun that says what something is to a target type ("the auth function").
var kindNouns = map[string]string{
	"function": "function", "func": "function", "fn": "function", "method": "function",
	"class": "type", "struct": "type", "type": "type", "interface": "type", "trait": "type", "enum": "type",
	"module": "module", "package": "module", "crate": "module", "library": "module",
	"file":      "file",
	"directory": "directory", "folder": "directory", "dir": "directory",
	"variable": "variable", "var": "variable", "constant": "variable", "const": "variable", "field": "variable",
	"endpoint": "endpoint", "route": "endpoint",
}

// cueWords are the one-word intent cues ("find", "explain"): verbs, never a target's name.
var cueWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, list := range builtinKeywords {
		for _, kw := range list {
			if ws := words(nil, kw, false); len(ws) == 1 {
				m[ws[0]] = struct{}{}
			}
		}
	}
	return m
}()

// findTarget names what text is about, trying in order: a `backticked` name; a file or directory
// path; a code identifier (CamelCase, snake_case, pkg.Name or a call foo()); a plain word next to a
// noun that says what it is ("the auth function", "function parse"). The first one found wins.
func findTarget(text string) (target, bool) {
	toks := tokens(text)
	for i, t := range toks {
		if t.quoted {
			return target{name: t.text, typ: quotedType(toks, i)}, true
		}
	}
	for _, t := range toks {
		if k := pathKind(t.text); k != "" {
			return target{name: t.text, typ: k}, true
		}
	}
	for i, t := range toks {
		if isIdentifier(t) {
			return target{name: t.text, typ: identifierType(toks, i)}, true
		}
	}
	for i, t := range toks {
		if typ, ok := kindNouns[t.lower]; ok {
			if name := nounNeighbour(toks, i); name != "" {
				return target{name: name, typ: typ}, true
			}
		}
	}
	return target{}, false
}

// quotedType types a backticked name by its shape, then by a neighbouring noun.
func quotedType(toks []token, i int) string {
	if k := pathKind(toks[i].text); k != "" {
		return k
	}
	return identifierType(toks, i)
}

// identifierType is "function" for a call, the type a neighbouring noun gives, else "symbol".
func identifierType(toks []token, i int) string {
	if toks[i].call {
		return "function"
	}
	neighbours := []int{i + 1, i - 1}
	if i >= 2 && (toks[i-1].lower == "called" || toks[i-1].lower == "named") {
		neighbours = append(neighbours, i-2) // "the function called parse_config"
	}
	for _, j := range neighbours {
		if j >= 0 && j < len(toks) {
			if typ, ok := kindNouns[toks[j].lower]; ok {
				return typ
			}
		}
	}
	return "symbol"
}

// isIdentifier reports a token that can only be code.
func isIdentifier(t token) bool {
	if t.call || isCamel(t.text) || isSnake(t.text) {
		return true
	}
	return isDotted(t.text)
}

// isDotted reports a qualified name such as http.Handler or os.read_file: identifier segments
// joined by dots, with a capital or underscore so prose abbreviations don't qualify.
func isDotted(s string) bool {
	segs := strings.Split(s, ".")
	if len(segs) < 2 || pathKind(s) != "" {
		return false
	}
	marked := false
	for _, seg := range segs {
		if seg == "" {
			return false
		}
		for k, r := range seg {
			if r != '_' && !unicode.IsLetter(r) && (k == 0 || !unicode.IsDigit(r)) {
				return false
			}
			marked = marked || r == '_' || unicode.IsUpper(r)
		}
	}
	return marked
}

// nounNeighbour is the name next to the kind noun at i: the word before it ("the auth function"),
// else the word after it, skipping "called"/"named" ("the function called parse").
func nounNeighbour(toks []token, i int) string {
	if i > 0 && nameLike(toks[i-1]) {
		return toks[i-1].text
	}
	j := i + 1
	if j < len(toks) && (toks[j].lower == "called" || toks[j].lower == "named") {
		j++
	}
	if j < len(toks) && nameLike(toks[j]) {
		return toks[j].text
	}
	return ""
}

// nameLike reports a word that can be a name: not a function word, a kind noun or an intent cue.
func nameLike(t token) bool {
	for k, r := range t.text {
		if !(unicode.IsLetter(r) || r == '_' || (k > 0 && (unicode.IsDigit(r) || r == '-' || r == '.'))) {
			return false
		}
	}
	if _, ok := kindNouns[t.lower]; ok {
		return false
	}
	if _, ok := cueWords[t.lower]; ok {
		return false
	}
	return !isStopWord(t.lower) && !isLeadIn(t.lower)
}

// domainWords are single-word cues for the domain of a prompt, in tie-break order.
var domainWords = []struct {
	domain string
	words  map[string]struct{}
}{
	{"coding", setOf("function", "functions", "method", "methods", "class", "classes", "struct",
		"interface", "variable", "compile", "compiler", "build", "bug", "bugs", "code", "codebase",
		"repo", "repository", "refactor", "commit", "branch", "merge", "test", "tests", "api",
		"endpoint", "library", "package", "module", "import", "dependency", "dependencies",
		"exception", "stacktrace", "segfault", "lint", "linter", "debug", "golang", "python",
		"rust", "java", "javascript", "typescript", "implement", "implementation")},
	{"security", setOf("vulnerability", "vulnerabilities", "cve", "exploit", "xss", "csrf",
		"injection", "secret", "secrets", "credential", "credentials", "password", "passwords",
		"malware", "phishing", "encryption", "encrypt", "certificate", "tls", "firewall", "breach",
		"attack")},
	{"operations", setOf("deploy", "deployment", "deployments", "kubernetes", "k8s", "cluster",
		"pod", "pods", "docker", "container", "containers", "incident", "outage", "uptime", "nginx",
		"terraform", "pipeline", "monitoring", "alert", "alerts", "rollback", "infrastructure")},
	{"data_analysis", setOf("dataset", "datasets", "dataframe", "csv", "spreadsheet", "chart",
		"plot", "regression", "average", "median", "statistics", "statistical", "pandas", "column",
		"columns", "rows", "correlation")},
	{"writing", setOf("essay", "paragraph", "blog", "article", "draft", "rewrite", "proofread",
		"tone", "grammar", "sentence", "story", "email", "headline")},
	{"research", setOf("paper", "papers", "study", "studies", "literature", "citation",
		"citations", "hypothesis", "research", "sources")},
	{"project_management", setOf("milestone", "milestones", "deadline", "roadmap", "sprint",
		"backlog", "ticket", "tickets", "stakeholder", "stakeholders", "estimate", "timeline")},
}

// codeTargetTypes are target types only code has.
var codeTargetTypes = setOf("file", "directory", "function", "type", "module", "variable", "endpoint", "symbol")

// codeDirs are path components that mark a workspace as a code checkout.
var codeDirs = setOf("repo", "repos", "src", "code", "git", "projects", "project", "workspace",
	"workspaces", "dev", "github", "gitlab", "source")

// targetHints names the prompt's target and domain; nil when it finds neither.
func targetHints(prompt, workspace string) *ahpv1.TargetHints {
	h := &ahpv1.TargetHints{}
	t, found := findTarget(prompt)
	if found {
		h.TargetName, h.TargetType = &t.name, &t.typ
	}
	_, codeTarget := codeTargetTypes[t.typ]
	if dom := detectDomain(prompt, workspace, found && codeTarget); dom != "" {
		h.Domain = &dom
	}
	if h.TargetName == nil && h.Domain == nil {
		return nil
	}
	return h
}

// detectDomain counts domain cue words in prompt; a code target adds two to coding and a
// code-like workspace one. The best domain wins, ties in domainWords order; "" without any cue.
func detectDomain(prompt, workspace string, codeTarget bool) string {
	scores := make([]int, len(domainWords))
	for _, w := range words(nil, prompt, false) {
		for i, d := range domainWords {
			if _, ok := d.words[w]; ok {
				scores[i]++
			}
		}
	}
	if codeTarget {
		scores[0] += 2
	}
	if looksLikeCodeWorkspace(workspace) {
		scores[0]++
	}
	best := -1
	for i, s := range scores {
		if s > 0 && (best < 0 || s > scores[best]) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return domainWords[best].domain
}

// looksLikeCodeWorkspace reports a workspace path with a component such as "repo" or "src", or a
// ".git" directory.
func looksLikeCodeWorkspace(ws string) bool {
	for _, part := range strings.FieldsFunc(strings.ToLower(ws), func(r rune) bool { return r == '/' || r == '\\' }) {
		if _, ok := codeDirs[part]; ok || strings.HasSuffix(part, ".git") {
			return true
		}
	}
	return false
}
