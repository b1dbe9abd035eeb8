// Package approvalcmd is `ahp-server approvals list|show|approve|deny`: the approvals of a running
// ahp-server through its ApprovalService, with a token read from an environment variable. One file
// per subcommand; this one holds the dispatch and what they share (server address, credential,
// client).
package approvalcmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/cli"
)

// DefaultTokenEnv is the variable the approver's bearer token is read from unless -token-env
// names another.
const DefaultTokenEnv = "AHP_APPROVER_TOKEN"

// Env is the process environment a command runs in, injected for tests.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// HTTPClient, when set, replaces the client built from the flags (tests).
	HTTPClient *http.Client
}

const usage = `usage: ahp-server approvals list [flags]
       ahp-server approvals show [flags] ID
       ahp-server approvals approve [flags] ID [-comment TEXT]
       ahp-server approvals deny [flags] ID [-comment TEXT]

Lists, shows and decides the approvals of a running ahp-server (ApprovalService). The bearer
token of a credential with the approve scope is read from $` + DefaultTokenEnv + ` (or the variable
-token-env names); the server records that credential as the approver.
`

// Run runs `ahp-server approvals ARGS…` and returns the exit status: 0 done, 1 the server
// refused or failed, 2 bad usage.
func Run(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return cli.UsageStatus
	}
	switch args[0] {
	case "list":
		return list(ctx, args[1:], env)
	case "show":
		return show(ctx, args[1:], env)
	case "approve":
		return decide(ctx, args[1:], env, true)
	case "deny":
		return decide(ctx, args[1:], env, false)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.Stdout, usage)
		return 0
	}
	fmt.Fprintf(env.Stderr, "ahp-server approvals: unknown subcommand %q\n", args[0])
	fmt.Fprint(env.Stderr, usage)
	return cli.UsageStatus
}

// common are the flags every subcommand has.
type common struct {
	server   *string
	tokenEnv *string
	caFile   *string
	timeout  *time.Duration
	json     *bool
}

func commonFlags(name string, env Env, head string) (*cli.Flags, *common) {
	fs := cli.NewFlags("ahp-server approvals "+name, env.Stderr, env.Getenv, head)
	return fs, &common{
		server:   fs.String("server", "http://127.0.0.1:8080", "ahp-server base URL (http:// or https://)", "AHP_SERVER"),
		tokenEnv: fs.String("token-env", DefaultTokenEnv, "environment variable holding the approver's bearer token", ""),
		caFile:   fs.String("ca", "", "PEM file of CAs to trust for an https server (default: the system's)", "AHP_SERVER_CA"),
		timeout:  fs.Duration("timeout", 30*time.Second, "how long to wait for the server", ""),
		json:     fs.Bool("json", false, "print protojson instead of text", ""),
	}
}

// parse parses flags and positional arguments in any order ("approve ID -comment ok" and
// "approve -comment ok ID" alike) and returns the positional ones.
func parse(fs *cli.Flags, args []string) (positional []string, status int, ok bool) {
	for {
		if status, ok := fs.Parse(args); !ok {
			return nil, status, false
		}
		if fs.NArg() == 0 {
			return positional, 0, true
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// client builds the ApprovalService client the flags describe.
func (c *common) client(env Env) (ahpv1connect.ApprovalServiceClient, error) {
	base := strings.TrimRight(*c.server, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, cli.BadValue("server", "must start with http:// or https://")
	}
	token := env.Getenv(*c.tokenEnv)
	if token == "" {
		return nil, fmt.Errorf("no approver token: set $%s to the bearer token of a credential with the approve scope", *c.tokenEnv)
	}
	hc := env.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if *c.caFile != "" {
			pem, err := os.ReadFile(*c.caFile)
			if err != nil {
				return nil, fmt.Errorf("-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, errors.New("-ca: no PEM certificate in the file")
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		hc = &http.Client{Transport: tr, Timeout: *c.timeout}
	}
	return ahpv1connect.NewApprovalServiceClient(hc, base,
		connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: auth.KindBearer, Secret: token}))), nil
}

// failed reports a server error on stderr (the token is never part of it) and returns 1.
func failed(env Env, what string, err error) int {
	switch connect.CodeOf(err) {
	case connect.CodeUnauthenticated:
		fmt.Fprintf(env.Stderr, "ahp-server approvals: %s: the server did not accept the token: %v\n", what, err)
	case connect.CodePermissionDenied:
		fmt.Fprintf(env.Stderr, "ahp-server approvals: %s: permission denied (the credential needs the approve scope and must be listed by the approval's rules): %v\n", what, err)
	default:
		fmt.Fprintf(env.Stderr, "ahp-server approvals: %s: %v\n", what, err)
	}
	return 1
}
