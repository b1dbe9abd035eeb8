package redact_test

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/redact"
	"google.golang.org/protobuf/types/known/structpb"
)

func ExampleRedactor_String() {
	r, _ := redact.New(redact.Config{})
	out, rep := r.String("git push https://deploy:Sup3rS3cret@git.example.com/app.git")
	fmt.Println(out)
	fmt.Println(rep.MaskedFields(), rep.Masked[0].Kind)
	// Output:
	// git push https://deploy:[REDACTED:url_password]@git.example.com/app.git
	// 1 url_password
}

func ExampleRedactor_Event() {
	r, _ := redact.New(redact.Config{Paths: []string{"tool.input.otp"}})
	input, _ := structpb.NewStruct(map[string]any{
		"command":  "curl -H 'Authorization: Bearer 4f9a8b7c6d5e4f3a2b1c' https://api.example.com",
		"password": "hunter2",
		"otp":      123456,
	})
	ev := &ahpv1.Event{Id: "e1", Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, Tool: &ahpv1.Tool{Name: "Bash", Input: input}}
	out, rep := r.Event(ev) // ev itself is unchanged
	in := out.GetTool().GetInput().GetFields()
	fmt.Println(in["command"].GetStringValue())
	fmt.Println(in["password"].GetStringValue())
	fmt.Println(in["otp"].GetStringValue())
	for _, f := range rep.Masked {
		fmt.Println(f.Path, f.Kind)
	}
	// Output:
	// curl -H 'Authorization: Bearer [REDACTED:authorization]' https://api.example.com
	// [REDACTED:secret_key]
	// [REDACTED:path]
	// tool.input.command authorization
	// tool.input.command bearer_token
	// tool.input.otp path
	// tool.input.password secret_key
}
