package cli

import "fmt"

// ValueError is a flag value that the command refuses after parsing it. Err's text is the whole
// message and names the flag itself (commands write "-timeout-ms: want …, got …").
type ValueError struct {
	Flag string // the flag's name, without the dash
	Err  error
}

// BadValue returns a *ValueError about flag whose message is formatted as by fmt.Errorf.
func BadValue(flag, format string, a ...any) error {
	return &ValueError{Flag: flag, Err: fmt.Errorf(format, a...)}
}

func (e *ValueError) Error() string { return e.Err.Error() }

// Unwrap returns the reason.
func (e *ValueError) Unwrap() error { return e.Err }

// envError is a value from the environment that the command refuses: the variable and why.
type envError struct {
	Env string // the variable's name
	Err error
}

func (e *envError) Error() string { return "environment variable " + e.Env + ": " + e.Err.Error() }

func (e *envError) Unwrap() error { return e.Err }
