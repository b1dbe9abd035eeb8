package redact_test

import (
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/redact"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestFailureNeverPassesTextThrough(t *testing.T) {
	t.Parallel()
	r := redact.WithPanickingDetector(newRedactor(t, redact.Config{}), "TRIGGER")
	secret := "TRIGGER hunter2-unknown-shape"

	got, rep := r.String(secret)
	if got != redact.Placeholder(redact.KindError) || !rep.Failed() {
		t.Errorf("String = %q, report %+v", got, rep)
	}

	ev := toolBefore()
	ev.Tool.Input.Fields["command"] = structpb.NewStringValue(secret)
	ev.Tool.Output = structpb.NewStringValue("fine")
	ev.Body = &ahpv1.Event_IntentDetection{IntentDetection: &ahpv1.IntentDetectionPayload{Prompt: secret}}
	out, rep := r.Event(ev)
	js := mustJSON(t, out)
	if strings.Contains(js, "hunter2") {
		t.Fatalf("text of a failed field survived: %s", js)
	}
	if out.Tool.Output.GetStringValue() != "fine" || out.Tool.Input.Fields["description"].GetStringValue() != "Push the branch" {
		t.Errorf("fields that did not fail were lost: %s", js)
	}
	for _, path := range []string{"tool.input.command", "intent_detection.prompt"} {
		found := false
		for _, f := range rep.Masked {
			found = found || f == redact.Finding{Path: path, Kind: redact.KindError}
		}
		if !found {
			t.Errorf("report %+v lacks an error at %s", rep.Masked, path)
		}
	}
}
