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
	ids, status, ok := parse(fs, args)
	if !ok {
		return status
	}
	if len(ids) != 1 {
		return fs.Failf("want one approval id")
	}
	id := ids[0]
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
