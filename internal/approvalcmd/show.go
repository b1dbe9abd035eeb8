package approvalcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

const showHead = `usage: ahp-server approvals show [flags] ID

Shows one approval: the held call, its rules and approvers, and its decision.

Flags:
`

func show(ctx context.Context, args []string, env Env) int {
	fs, c := commonFlags("show", env, showHead)
	ids, status, ok := parse(fs, args)
	if !ok {
		return status
	}
	if len(ids) != 1 {
		return fs.Failf("want one approval id")
	}
	client, err := c.client(env)
	if err != nil {
		return fs.Fail(err)
	}
	resp, err := client.Get(ctx, connect.NewRequest(&ahpv1.ApprovalServiceGetRequest{Id: ids[0]}))
	if err != nil {
		return failed(env, "show", err)
	}
	if *c.json {
		b, _ := protojson.Marshal(resp.Msg.GetApproval())
		fmt.Fprintln(env.Stdout, string(b))
		return 0
	}
	printApproval(env.Stdout, resp.Msg.GetApproval())
	return 0
}

// printApproval writes an approval as "field: value" lines, leaving out empty fields.
func printApproval(w io.Writer, a *ahpv1.Approval) {
	var approvers []string
	for _, l := range a.GetApprovers() {
		approvers = append(approvers, "["+strings.Join(l.GetApprovers(), ", ")+"]")
	}
	for _, f := range [][2]string{
		{"id", a.GetId()},
		{"state", stateName(a.GetState())},
		{"rules", strings.Join(a.GetRuleIds(), ", ")},
		{"kind", a.GetKind()},
		{"reason", a.GetReason()},
		{"target", a.GetTarget()},
		{"principal", a.GetPrincipal()},
		{"agent", a.GetAgentId()},
		{"session", a.GetSessionId()},
		{"source", a.GetSource()},
		{"event", strings.TrimSpace(a.GetEventType() + " " + a.GetEventId())},
		{"tool", a.GetTool()},
		{"input", a.GetInputSummary()},
		{"approvers", strings.Join(approvers, " and ")},
		{"requested", a.GetCreatedAt()},
		{"hold until", a.GetHoldUntil()},
		{"decided", a.GetDecidedAt()},
		{"decided by", a.GetDecidedBy()},
		{"comment", a.GetComment()},
		{"grant until", a.GetGrantExpiresAt()},
		{"grant used", a.GetConsumedAt()},
	} {
		if f[1] != "" {
			fmt.Fprintf(w, "%-12s %s\n", f[0]+":", f[1])
		}
	}
	if a.GetAbandoned() {
		fmt.Fprintf(w, "%-12s %s\n", "abandoned:", "every held caller went away; a retry after approval still goes through once")
	}
}
