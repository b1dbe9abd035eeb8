package cli

import "fmt"

// ValueError is a flag value that the command refuses after parsing it. Its text is "-FLAG: why",
// the form every command uses for such a message.
type ValueError struct {
	Flag string // the flag's name, without the dash
	Why  string
}

// BadValue returns a *ValueError about flag with a reason formatted as by fmt.Sprintf.
func BadValue(flag, format string, a ...any) error {
	return &ValueError{Flag: flag, Why: fmt.Sprintf(format, a...)}
}

func (e *ValueError) Error() string { return "-" + e.Flag + ": " + e.Why }

// EnvError is a value from the environment that the command refuses: the variable and why.
type EnvError struct {
	Env string // the variable's name
	Err error
}

func (e *EnvError) Error() string { return "environment variable " + e.Env + ": " + e.Err.Error() }

// Unwrap returns why the value was refused.
func (e *EnvError) Unwrap() error { return e.Err }
