package cli_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cli"
)

// values is one flag of every type, each bound to a variable named after it.
type values struct {
	str      *string
	boolean  *bool
	integer  *int
	unsigned *uint64
	float    *float64
	duration *time.Duration
	unbound  *string
}

func newFlags(env map[string]string, stderr *bytes.Buffer) (*cli.Flags, values) {
	f := cli.NewFlags("cmd", stderr, func(k string) string { return env[k] }, "Usage: cmd [flags]\n")
	return f, values{
		str:      f.String("str", "default", "a string", "T_STR"),
		boolean:  f.Bool("bool", false, "a boolean", "T_BOOL"),
		integer:  f.Int("int", 7, "an integer", "T_INT"),
		unsigned: f.Uint64("uint", 8, "an unsigned integer", "T_UINT"),
		float:    f.Float64("float", 0.5, "a number", "T_FLOAT"),
		duration: f.Duration("duration", time.Second, "a duration", "T_DURATION"),
		unbound:  f.String("unbound", "u", "not bound", ""),
	}
}

func (v values) String() string {
	return fmt.Sprintf("%s %t %d %d %g %s %s", *v.str, *v.boolean, *v.integer, *v.unsigned, *v.float, *v.duration, *v.unbound)
}

func TestEnvironmentGivesEveryTypeItsValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"defaults", nil, nil, "default false 7 8 0.5 1s u"},
		{"empty variables count as unset", map[string]string{"T_STR": "", "T_INT": ""}, nil, "default false 7 8 0.5 1s u"},
		{"every type from the environment", map[string]string{
			"T_STR": "s", "T_BOOL": "true", "T_INT": "-3", "T_UINT": "9", "T_FLOAT": "2.25", "T_DURATION": "1m30s",
		}, nil, "s true -3 9 2.25 1m30s u"},
		{"the command line wins", map[string]string{"T_STR": "env", "T_INT": "1", "T_BOOL": "true"},
			[]string{"-str", "flag", "-int", "2", "-bool=false"}, "flag false 2 8 0.5 1s u"},
		{"the command line wins over a bad value", map[string]string{"T_INT": "many", "T_DURATION": "soon"},
			[]string{"-int", "3", "-duration", "2s"}, "default false 3 8 0.5 2s u"},
		{"an unbound flag ignores the environment", map[string]string{"UNBOUND": "x", "": "y"}, nil, "default false 7 8 0.5 1s u"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			f, v := newFlags(c.env, &stderr)
			status, ok := f.Parse(c.args)
			if !ok {
				t.Fatalf("Parse: status %d, stderr %q", status, stderr.String())
			}
			if got := v.String(); got != c.want {
				t.Errorf("values %q, want %q", got, c.want)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr %q", stderr.String())
			}
		})
	}
}

func TestBadEnvironmentValueIsAUsageErrorNamingTheVariable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env  map[string]string
		want []string // the lines on stderr
	}{
		{map[string]string{"T_BOOL": "yes please"}, []string{`cmd: environment variable T_BOOL: invalid value "yes please" for -bool: want true or false`}},
		{map[string]string{"T_INT": "1.5"}, []string{`cmd: environment variable T_INT: invalid value "1.5" for -int: want a whole number`}},
		{map[string]string{"T_UINT": "-1"}, []string{`cmd: environment variable T_UINT: invalid value "-1" for -uint: want a whole number, not negative`}},
		{map[string]string{"T_FLOAT": "fast"}, []string{`cmd: environment variable T_FLOAT: invalid value "fast" for -float: want a number`}},
		{map[string]string{"T_DURATION": "10"}, []string{`cmd: environment variable T_DURATION: invalid value "10" for -duration: want a duration such as 10s`}},
		{map[string]string{"T_DURATION": "x", "T_INT": "y"}, []string{ // every bad variable, in declaration order
			`cmd: environment variable T_INT: invalid value "y" for -int: want a whole number`,
			`cmd: environment variable T_DURATION: invalid value "x" for -duration: want a duration such as 10s`,
		}},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		f, _ := newFlags(c.env, &stderr)
		status, ok := f.Parse(nil)
		if ok {
			t.Errorf("%v: Parse accepted it", c.env)
			continue
		}
		if status != cli.UsageStatus {
			t.Errorf("%v: status %d, want %d", c.env, status, cli.UsageStatus)
		}
		if got, want := stderr.String(), strings.Join(c.want, "\n")+"\n"; got != want {
			t.Errorf("%v: stderr\n%s\nwant\n%s", c.env, got, want)
		}
	}
}

func TestHelpShowsTheVariableAndTheDefaultThatApplies(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	f, _ := newFlags(map[string]string{"T_INT": "12"}, &stderr)
	status, ok := f.Parse([]string{"-help"})
	if ok || status != 0 {
		t.Fatalf("-help: ok %v, status %d", ok, status)
	}
	help := stderr.String()
	for _, want := range []string{"Usage: cmd [flags]\n", "an integer (env T_INT) (default 12)", "a duration (env T_DURATION) (default 1s)", "not bound (default \"u\")"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
}

func TestBadFlagIsAUsageError(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	f, _ := newFlags(nil, &stderr)
	status, ok := f.Parse([]string{"-int", "many"})
	if ok || status != cli.UsageStatus {
		t.Fatalf("ok %v, status %d", ok, status)
	}
	if !strings.Contains(stderr.String(), `invalid value "many" for flag -int`) {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestFailNamesTheVariableAValueCameFrom(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		args []string
		err  error
		want string
	}{
		{"from the environment", map[string]string{"T_STR": "odd"}, nil, cli.BadValue("str", "-str: want even, got %q", "odd"),
			"cmd: environment variable T_STR: -str: want even, got \"odd\"\n"},
		{"from the command line", map[string]string{"T_STR": "fine"}, []string{"-str", "odd"}, cli.BadValue("str", "-str: want even, got %q", "odd"),
			"cmd: -str: want even, got \"odd\"\n"},
		{"the default", nil, nil, cli.BadValue("str", "-str: want even"), "cmd: -str: want even\n"},
		{"not about one flag", map[string]string{"T_STR": "odd"}, nil, errors.New("-str and -int disagree"), "cmd: -str and -int disagree\n"},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		f, _ := newFlags(c.env, &stderr)
		if _, ok := f.Parse(c.args); !ok {
			t.Fatalf("%s: Parse: %s", c.name, stderr.String())
		}
		if status := f.Fail(c.err); status != cli.UsageStatus {
			t.Errorf("%s: status %d", c.name, status)
		}
		if stderr.String() != c.want {
			t.Errorf("%s: stderr %q, want %q", c.name, stderr.String(), c.want)
		}
	}
}

func TestEnvNamesTheSource(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	f, _ := newFlags(map[string]string{"T_STR": "a", "T_INT": "1"}, &stderr)
	if _, ok := f.Parse([]string{"-int", "2"}); !ok {
		t.Fatal(stderr.String())
	}
	for name, want := range map[string]string{"str": "T_STR", "int": "", "float": "", "unbound": ""} {
		if got := f.Env(name); got != want {
			t.Errorf("Env(%q) = %q, want %q", name, got, want)
		}
	}
}
