package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ahp-gateway/ahp/internal/adapter"
	"github.com/ahp-gateway/ahp/internal/cli"
	"github.com/ahp-gateway/ahp/internal/hookconfig"
)

const hookSetupUsageHead = `Usage: ahp-jsonrpc-bridge hook install|uninstall|doctor RUNTIME [--project DIR | --user] [flags]

install    writes RUNTIME's hook configuration so that it runs "ahp-jsonrpc-bridge hook RUNTIME" for
           every event the adapter maps; idempotent, keeps every other setting, backs the old file
           up (FILE.ahp-gateway.bak), refuses a file it cannot parse
uninstall  removes exactly what install added
doctor     reads the configuration back, says whether RUNTIME will load it (feature flags, missing
           events, the program not found) and runs a test event through the configured command

RUNTIME is claude-code, codex, cursor, gemini, copilot, factory, windsurf or cline. The hook
command gets --upstream, --upstream-token-env, --failure-policy, --policy and --timeout-ms as given
here. Exit status: 0 done (doctor: the hook works), 1 failed (doctor: a problem was found), 2 bad
usage.

Flags:
`

// runHookSetup runs hook install, uninstall or doctor.
func runHookSetup(ctx context.Context, verb string, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := cli.NewFlags("ahp-jsonrpc-bridge hook "+verb, stderr, getenv, hookSetupUsageHead)
	project := fs.String("project", "", "project `directory` whose configuration to change (default: the current directory)", "")
	user := fs.Bool("user", false, "change the user's configuration (under $HOME) instead of a project's", "")
	upstream := fs.String("upstream", "", "ahp-server `URL` the hook asks; empty: the decision core runs in the hook process", "")
	tokenEnv := fs.String("upstream-token-env", "", "`name` of the variable holding the upstream's bearer token", "")
	failure := fs.String("failure-policy", "fail-closed", "the hook's failure `policy`: fail-closed or fail-open (also sets the runtime's own where it has one: Cursor failClosed, Claude Code onFailure)", "")
	policy := fs.String("policy", "", "embedded mode: policy YAML `file` (made absolute)", "")
	timeoutMs := fs.Int("timeout-ms", 2000, "the hook's decision deadline in `milliseconds`", "")
	hookTimeout := fs.Int("hook-timeout", 10, "the runtime's deadline for one hook run, in `seconds`", "")
	bin := fs.String("bin", "", "`path` of ahp-jsonrpc-bridge written into the configuration (default: this executable)", "")

	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fs.Usage()
			return 0
		}
		fs.Usage()
		return fs.Failf("name the runtime: %s", adapter.ProviderList())
	}
	provider, err := adapter.ParseProvider(args[0])
	if err != nil {
		return fs.Failf("unknown runtime %q: want one of %s", args[0], adapter.ProviderList())
	}
	if status, ok := fs.Parse(args[1:]); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return fs.Failf("unexpected argument %q (see -help)", fs.Arg(0))
	}
	if *user && *project != "" {
		return fs.Failf("give --project DIR or --user, not both")
	}
	if *failure != "fail-closed" && *failure != "fail-open" {
		return fs.Failf("-failure-policy: want fail-closed or fail-open")
	}
	if *hookTimeout < 1 || *hookTimeout > 600 {
		return fs.Failf("-hook-timeout: want 1-600 seconds")
	}
	o := hookconfig.Options{Provider: provider, Scope: hookconfig.Project, Home: getenv("HOME"),
		FailClosed: *failure == "fail-closed", TimeoutSec: *hookTimeout}
	if *user {
		o.Scope = hookconfig.User
		if o.Home == "" {
			return fs.Failf("--user: HOME is not set")
		}
	} else {
		dir := *project
		if dir == "" {
			dir = "."
		}
		if o.Dir, err = filepath.Abs(dir); err != nil {
			return fs.Fail(err)
		}
	}
	if verb != "doctor" {
		program := *bin
		if program == "" {
			if program, err = os.Executable(); err != nil {
				return fs.Fail(fmt.Errorf("cannot find this executable; give --bin: %w", err))
			}
		}
		hookArgs := []string{program, "hook", provider.String()}
		if *upstream != "" {
			hookArgs = append(hookArgs, "--upstream", *upstream)
		}
		if *tokenEnv != "" {
			hookArgs = append(hookArgs, "--upstream-token-env", *tokenEnv)
		}
		if *policy != "" {
			abs, err := filepath.Abs(*policy)
			if err != nil {
				return fs.Fail(err)
			}
			hookArgs = append(hookArgs, "--policy", abs)
		}
		hookArgs = append(hookArgs, "--failure-policy", *failure, "--timeout-ms", strconv.Itoa(*timeoutMs))
		o.Command = shellJoin(hookArgs)
	}

	switch verb {
	case "install", "uninstall":
		do := hookconfig.Install
		if verb == "uninstall" {
			do = hookconfig.Uninstall
		}
		res, err := do(o)
		if err != nil {
			fmt.Fprintf(stderr, "ahp-jsonrpc-bridge hook %s %s: %v\n", verb, provider, err)
			return 1
		}
		switch {
		case !res.Changed:
			fmt.Fprintf(stdout, "%s: already %s, nothing changed\n", res.Path, map[string]string{"install": "installed", "uninstall": "without the hook"}[verb])
		case verb == "install":
			fmt.Fprintf(stdout, "%s: hook installed for %s\n", res.Path, strings.Join(res.Events, ", "))
		default:
			fmt.Fprintf(stdout, "%s: hook removed\n", res.Path)
		}
		if res.Backup != "" {
			fmt.Fprintf(stdout, "previous file kept as %s\n", res.Backup)
		}
		return 0
	}
	rep, err := hookconfig.Doctor(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "ahp-jsonrpc-bridge hook doctor %s: %v\n", provider, err)
		return 1
	}
	printReport(stdout, rep)
	if !rep.OK() {
		return 1
	}
	return 0
}

func printReport(w io.Writer, r *hookconfig.Report) {
	fmt.Fprintf(w, "configuration: %s\n", r.Path)
	if r.Command != "" {
		fmt.Fprintf(w, "hook command:  %s\n", r.Command)
	}
	if len(r.Registered) > 0 {
		fmt.Fprintf(w, "events:        %s\n", strings.Join(r.Registered, ", "))
	}
	if len(r.Missing) > 0 && len(r.Registered) > 0 {
		fmt.Fprintf(w, "not registered: %s\n", strings.Join(r.Missing, ", "))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "PROBLEM: %s\n", p)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if t := r.Test; t != nil {
		fmt.Fprintf(w, "test event:    exit %d in %s, stdout %q", t.Exit, t.Took.Round(100_000), t.Stdout)
		if t.Stderr != "" {
			fmt.Fprintf(w, ", stderr %q", t.Stderr)
		}
		fmt.Fprintln(w)
		if t.Err != "" {
			fmt.Fprintf(w, "PROBLEM: test event: %s\n", t.Err)
		}
	}
	if r.OK() {
		fmt.Fprintln(w, "OK: the runtime will run the hook and it answers")
	}
}

// shellJoin quotes each argument for sh when it needs it.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
