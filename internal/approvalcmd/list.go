package approvalcmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

const listHead = `usage: ahp-server approvals list [-state pending|approved|denied|expired] [-agent ID] [-session ID] [-rule ID] [-limit N] [flags]

Lists approvals, newest first: pending ones with the time left to decide, decided ones with who
decided and how long it took.

Flags:
`

func list(ctx context.Context, args []string, env Env) int {
	fs, c := commonFlags("list", env, listHead)
	state := fs.String("state", "", "only this state: pending, approved, denied or expired", "")
	agent := fs.String("agent", "", "only this agent id", "")
	session := fs.String("session", "", "only this session id", "")
	rule := fs.String("rule", "", "only approvals with this rule id", "")
	limit := fs.Int("limit", 100, "at most this many (up to 1000)", "")
	extra, status, ok := parse(fs, args)
	if !ok {
		return status
	}
	if len(extra) > 0 {
		return fs.Failf("unexpected argument %q", extra[0])
	}
	req := &ahpv1.ApprovalServiceListRequest{AgentId: *agent, SessionId: *session, RuleId: *rule}
	if *state != "" {
		v, ok := ahpv1.ApprovalState_value["APPROVAL_STATE_"+strings.ToUpper(*state)]
		if !ok || v == 0 {
			return fs.Failf("-state: want pending, approved, denied or expired")
		}
		req.State = ahpv1.ApprovalState(v)
	}
	if *limit < 1 || *limit > 1000 {
		return fs.Failf("-limit: want 1 to 1000")
	}
	req.Limit = uint32(*limit)
	client, err := c.client(env)
	if err != nil {
		return fs.Fail(err)
	}
	resp, err := client.List(ctx, connect.NewRequest(req))
	if err != nil {
		return failed(env, "list", err)
	}
	if *c.json {
		b, _ := protojson.Marshal(resp.Msg)
		fmt.Fprintln(env.Stdout, string(b))
		return 0
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tRULE\tAGENT\tSESSION\tTOOL\tWHEN")
	now := time.Now()
	for _, a := range resp.Msg.GetApprovals() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.GetId(), stateName(a.GetState()), first(a.GetRuleIds()),
			dash(a.GetAgentId()), dash(a.GetSessionId()), dash(a.GetTool()), when(a, now))
	}
	tw.Flush()
	return 0
}

// when is the time left for a pending approval, else who decided and how long it took.
func when(a *ahpv1.Approval, now time.Time) string {
	if a.GetState() == ahpv1.ApprovalState_APPROVAL_STATE_PENDING {
		if t, err := time.Parse(time.RFC3339Nano, a.GetHoldUntil()); err == nil {
			return "decide within " + t.Sub(now).Round(time.Second).String()
		}
		return ""
	}
	took := (time.Duration(a.GetLatencyMs()) * time.Millisecond).Round(time.Second)
	if a.GetDecidedBy() != "" {
		return fmt.Sprintf("by %s after %s", a.GetDecidedBy(), took)
	}
	return "after " + took.String()
}

func stateName(s ahpv1.ApprovalState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "APPROVAL_STATE_"))
}

func first(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return s[0]
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
