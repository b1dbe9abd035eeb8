package approvalcmd

import (
	"context"
	"fmt"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

const decideHead = `usage: ahp-server approvals approve|deny [flags] ID

Approves or denies a pending approval as the credential whose token is in $` + DefaultTokenEnv + `.
The comment is shown to the agent. The first decision stands.

Flags:
`

// decide is both approve and deny.
func decide(ctx context.Context, args []string, env Env, approve bool) int {
	verb := "deny"
	if approve {
		verb = "approve"
	}
	fs, c := commonFlags(verb, env, decideHead)
	comment := fs.String("comment", "", "comment shown to the agent (at most 1024 bytes)", "")
	// The id comes first or last: `approve ID -comment ok` or `approve -comment ok ID`.
	var id string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		id, args = args[0], args[1:]
	}
	if status, ok := fs.Parse(args); !ok {
		return status
	}
	if id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	} else if fs.NArg() > 0 {
		id = ""
	}
	if id == "" {
		return fs.Failf("want one approval id")
	}
	if len(*comment) > 1024 {
		return fs.Failf("-comment: at most 1024 bytes")
	}
	client, err := c.client(env)
	if err != nil {
		return fs.Fail(err)
	}
	resp, err := client.Decide(ctx, connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{Id: id, Approve: approve, Comment: *comment}))
	if err != nil {
		return failed(env, verb, err)
	}
	if *c.json {
		b, _ := protojson.Marshal(resp.Msg.GetApproval())
		fmt.Fprintln(env.Stdout, string(b))
		return 0
	}
	a := resp.Msg.GetApproval()
	fmt.Fprintf(env.Stdout, "%s %s by %s\n", a.GetId(), stateName(a.GetState()), a.GetDecidedBy())
	return 0
}
