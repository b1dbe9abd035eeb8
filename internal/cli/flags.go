// Package cli is the command-line wiring the commands share: flags bound to environment
// variables, usage errors, the logger and the version string. A command declares its flags here,
// so every binary reads its environment, reports a bad value and exits on it the same way.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// UsageStatus is the exit status of a command run with a bad flag, argument or environment value.
const UsageStatus = 2

// Flags is a command's flag set. A flag bound to an environment variable takes the variable's
// value, when it is set and not empty, in place of its default; the command line overrides both.
// A variable whose value does not parse is a usage error, unless the command line sets the flag.
type Flags struct {
	*flag.FlagSet
	getenv func(string) string
	// fromEnv names, by flag, the variable the flag's value came from; Parse drops the flags the
	// command line sets.
	fromEnv map[string]string
	badEnv  []badEnv
}

// badEnv is an environment value a flag refused.
type badEnv struct {
	flag, env string
	err       error
}

// NewFlags returns an empty flag set for the command name (the prefix of its error messages)
// reading the environment through getenv. -help prints usageHead and then every flag to stderr.
func NewFlags(name string, stderr io.Writer, getenv func(string) string, usageHead string) *Flags {
	f := &Flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), getenv: getenv, fromEnv: map[string]string{}}
	f.SetOutput(stderr)
	f.Usage = func() {
		fmt.Fprint(stderr, usageHead)
		f.PrintDefaults()
	}
	return f
}

// String defines a string flag; env, when not empty, is the variable bound to it and is named at
// the end of the usage text.
func (f *Flags) String(name, value, usage, env string) *string {
	return bound(f, f.FlagSet.String(name, value, withEnv(usage, env)), name, env, "a string")
}

// Bool defines a boolean flag bound to env (see String); the variable takes the values
// strconv.ParseBool accepts.
func (f *Flags) Bool(name string, value bool, usage, env string) *bool {
	return bound(f, f.FlagSet.Bool(name, value, withEnv(usage, env)), name, env, "true or false")
}

// Int defines an integer flag bound to env (see String).
func (f *Flags) Int(name string, value int, usage, env string) *int {
	return bound(f, f.FlagSet.Int(name, value, withEnv(usage, env)), name, env, "a whole number")
}

// Uint64 defines an unsigned integer flag bound to env (see String).
func (f *Flags) Uint64(name string, value uint64, usage, env string) *uint64 {
	return bound(f, f.FlagSet.Uint64(name, value, withEnv(usage, env)), name, env, "a whole number, not negative")
}

// Float64 defines a floating-point flag bound to env (see String).
func (f *Flags) Float64(name string, value float64, usage, env string) *float64 {
	return bound(f, f.FlagSet.Float64(name, value, withEnv(usage, env)), name, env, "a number")
}

// Duration defines a duration flag bound to env (see String).
func (f *Flags) Duration(name string, value time.Duration, usage, env string) *time.Duration {
	return bound(f, f.FlagSet.Duration(name, value, withEnv(usage, env)), name, env, "a duration such as 10s")
}

// bound binds the flag just defined, whose value p points to, to env; want says what the
// variable must hold.
func bound[T any](f *Flags, p *T, name, env, want string) *T {
	f.bind(name, env, want)
	return p
}

func withEnv(usage, env string) string {
	if env == "" {
		return usage
	}
	return usage + " (env " + env + ")"
}

// bind gives flag name the value of env, if set. The usage shows that value as the default,
// since it is what applies without the flag.
func (f *Flags) bind(name, env, want string) {
	if env == "" {
		return
	}
	v := f.getenv(env)
	if v == "" {
		return
	}
	fl := f.Lookup(name)
	def := fl.Value.String()
	if err := fl.Value.Set(v); err != nil {
		_ = fl.Value.Set(def) // some flag types store a zero on failure
		f.badEnv = append(f.badEnv, badEnv{flag: name, env: env, err: fmt.Errorf("invalid value %q for -%s: want %s", v, name, want)})
		return
	}
	fl.DefValue = fl.Value.String()
	f.fromEnv[name] = env
}

// Parse parses the command line. ok is false when the command is to exit with status: 0 after
// -help; UsageStatus after a bad flag (the flag package has printed why and the usage) or after a
// bad environment value of a flag the command line does not set (printed here, one line each).
func (f *Flags) Parse(args []string) (status int, ok bool) {
	if err := f.FlagSet.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return UsageStatus, false
	}
	f.Visit(func(fl *flag.Flag) { delete(f.fromEnv, fl.Name) })
	failed := false
	for _, b := range f.badEnv {
		if f.isSet(b.flag) {
			continue
		}
		f.report(&envError{Env: b.env, Err: b.err})
		failed = true
	}
	if failed {
		return UsageStatus, false
	}
	return 0, true
}

func (f *Flags) isSet(name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// Env names the variable flag name's value came from, or "" when it came from the command line
// or is the default. It is meaningful after Parse.
func (f *Flags) Env(name string) string { return f.fromEnv[name] }

// Fail reports a usage error on stderr, after the command's name, and returns UsageStatus. A
// *ValueError about a flag whose value came from the environment also names the variable.
func (f *Flags) Fail(err error) int {
	var ve *ValueError
	if errors.As(err, &ve) {
		if env := f.Env(ve.Flag); env != "" {
			err = &envError{Env: env, Err: err}
		}
	}
	f.report(err)
	return UsageStatus
}

// Failf is Fail with a message formatted as by fmt.Errorf.
func (f *Flags) Failf(format string, a ...any) int {
	return f.Fail(fmt.Errorf(format, a...))
}

func (f *Flags) report(err error) {
	fmt.Fprintf(f.Output(), "%s: %v\n", f.Name(), err)
}
