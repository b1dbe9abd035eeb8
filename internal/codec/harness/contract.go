package harness

// Payloads of the v2.4 run contracts (run_lifecycle, task_list, verification). The reference
// validates them even when they arrive as notifications. Lists marked
// #[serde(default, skip_serializing_if = "Vec::is_empty")] may be absent and are not written when
// empty.

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

func decodeRunLifecycle(path string, v any) (*ahpv1.RunLifecycle, error) {
	m := &ahpv1.RunLifecycle{}
	return readInto(m, path, v, "RunLifecycleEvent", []structField{
		reqString("run_id", &m.RunId),
		reqString("session_id", &m.SessionId),
		reqEnum("status", &m.Status),
		optString("prompt", &m.Prompt),
		optString("result_summary", &m.ResultSummary),
		optString("error", &m.Error),
		optString("started_at", &m.StartedAt),
		reqString("updated_at", &m.UpdatedAt),
		optMap("metadata", &m.Metadata),
	})
}

func runLifecycleJSON(m *ahpv1.RunLifecycle, _ encoder) (map[string]any, error) {
	out, err := contractJSON(m, m.GetStatus())
	if err != nil {
		return nil, err
	}
	putString(out, "prompt", m.Prompt)
	putString(out, "result_summary", m.ResultSummary)
	putString(out, "error", m.Error)
	putString(out, "started_at", m.StartedAt)
	return out, nil
}

func decodeTaskList(path string, v any) (*ahpv1.TaskList, error) {
	m := &ahpv1.TaskList{}
	return readInto(m, path, v, "TaskListEvent", []structField{
		reqString("run_id", &m.RunId),
		reqString("session_id", &m.SessionId),
		{name: "tasks", decode: func(p string, v any) error {
			m.Tasks = []*ahpv1.TaskItem{}
			return readSeqInto(p, v, &m.Tasks, decodeTaskItem)
		}},
		reqString("updated_at", &m.UpdatedAt),
		optMap("metadata", &m.Metadata),
	})
}

func taskListJSON(m *ahpv1.TaskList, _ encoder) (map[string]any, error) {
	tasks, err := listJSON("tasks", m.GetTasks(), taskItemJSON)
	if err != nil {
		return nil, err
	}
	out, _ := contractJSON(m, nil)
	out["tasks"] = tasks
	return out, nil
}

func decodeTaskItem(path string, v any) (*ahpv1.TaskItem, error) {
	t := &ahpv1.TaskItem{}
	return readInto(t, path, v, "TaskItem", []structField{
		reqString("id", &t.Id),
		reqString("title", &t.Title),
		reqEnum("status", &t.Status),
		defaultStrings("depends_on", &t.DependsOn),
		defaultEvidence("evidence", &t.Evidence),
		defaultArtifacts("artifacts", &t.Artifacts),
		optString("error", &t.Error),
		optString("updated_at", &t.UpdatedAt),
		optMap("metadata", &t.Metadata),
	})
}

func taskItemJSON(path string, t *ahpv1.TaskItem) (map[string]any, error) {
	t = nonNil(t)
	out, err := itemJSON(path, t, t.GetStatus())
	if err != nil {
		return nil, err
	}
	out["title"] = t.GetTitle()
	if len(t.GetDependsOn()) > 0 {
		out["depends_on"] = stringsJSON(t.GetDependsOn())
	}
	putString(out, "error", t.Error)
	putString(out, "updated_at", t.UpdatedAt)
	return out, nil
}

func decodeVerification(path string, v any) (*ahpv1.Verification, error) {
	m := &ahpv1.Verification{}
	return readInto(m, path, v, "VerificationEvent", []structField{
		reqString("run_id", &m.RunId),
		reqString("session_id", &m.SessionId),
		reqEnum("status", &m.Status),
		{name: "checks", optional: true, defaulted: true, decode: func(p string, v any) error {
			return readSeqInto(p, v, &m.Checks, decodeCheck)
		}},
		defaultStrings("residual_risks", &m.ResidualRisks),
		reqString("updated_at", &m.UpdatedAt),
		optMap("metadata", &m.Metadata),
	})
}

func verificationJSON(m *ahpv1.Verification, _ encoder) (map[string]any, error) {
	out, err := contractJSON(m, m.GetStatus())
	if err != nil {
		return nil, err
	}
	if len(m.GetChecks()) > 0 {
		checks, err := listJSON("checks", m.GetChecks(), checkJSON)
		if err != nil {
			return nil, err
		}
		out["checks"] = checks
	}
	if len(m.GetResidualRisks()) > 0 {
		out["residual_risks"] = stringsJSON(m.GetResidualRisks())
	}
	return out, nil
}

func decodeCheck(path string, v any) (*ahpv1.VerificationCheck, error) {
	c := &ahpv1.VerificationCheck{}
	return readInto(c, path, v, "VerificationCheck", []structField{
		reqString("id", &c.Id),
		reqString("subject", &c.Subject),
		reqEnum("status", &c.Status),
		optString("command", &c.Command),
		optString("message", &c.Message),
		defaultEvidence("evidence", &c.Evidence),
		defaultArtifacts("artifacts", &c.Artifacts),
		optMap("metadata", &c.Metadata),
	})
}

func checkJSON(path string, c *ahpv1.VerificationCheck) (map[string]any, error) {
	c = nonNil(c)
	out, err := itemJSON(path, c, c.GetStatus())
	if err != nil {
		return nil, err
	}
	out["subject"] = c.GetSubject()
	putString(out, "command", c.Command)
	putString(out, "message", c.Message)
	return out, nil
}

// runContract is what the three run contract events carry besides their own fields.
type runContract interface {
	GetRunId() string
	GetSessionId() string
	GetUpdatedAt() string
	GetMetadata() *structpb.Struct
}

// contractJSON starts the object of a run contract event: its ids, updated_at, metadata, and
// status unless it is nil (task_list has none).
func contractJSON(m runContract, status protoreflect.Enum) (map[string]any, error) {
	out := map[string]any{"run_id": m.GetRunId(), "session_id": m.GetSessionId(), "updated_at": m.GetUpdatedAt()}
	if status != nil {
		s, err := enumWire("status", status)
		if err != nil {
			return nil, err
		}
		out["status"] = s
	}
	putMap(out, "metadata", m.GetMetadata())
	return out, nil
}

// evidenced is what task items and verification checks share.
type evidenced interface {
	GetId() string
	GetEvidence() []*ahpv1.EvidenceRef
	GetArtifacts() []*ahpv1.ArtifactRef
	GetMetadata() *structpb.Struct
}

// itemJSON starts the object of a task item or a check at path: id, status, evidence, artifacts
// and metadata.
func itemJSON(path string, m evidenced, status protoreflect.Enum) (map[string]any, error) {
	s, err := enumWire(jsonwire.JoinPath(path, "status"), status)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"id": m.GetId(), "status": s}
	putEvidence(out, m.GetEvidence())
	putArtifacts(out, m.GetArtifacts())
	putMap(out, "metadata", m.GetMetadata())
	return out, nil
}

// defaultEvidence is a Vec<EvidenceRef> with #[serde(default)].
func defaultEvidence(name string, dst *[]*ahpv1.EvidenceRef) structField {
	return structField{name: name, optional: true, defaulted: true, decode: func(p string, v any) error {
		return readSeq(p, v, func(p string, v any) error {
			e := &ahpv1.EvidenceRef{}
			err := readStruct(p, v, "EvidenceRef", []structField{
				reqString("kind", &e.Kind),
				reqString("summary", &e.Summary),
				opt("artifact", &e.Artifact, decodeArtifact),
				optMap("metadata", &e.Metadata),
			})
			*dst = append(*dst, e)
			return err
		})
	}}
}

// defaultArtifacts is a Vec<ArtifactRef> with #[serde(default)].
func defaultArtifacts(name string, dst *[]*ahpv1.ArtifactRef) structField {
	return structField{name: name, optional: true, defaulted: true, decode: func(p string, v any) error {
		return readSeqInto(p, v, dst, decodeArtifact)
	}}
}

func decodeArtifact(path string, v any) (*ahpv1.ArtifactRef, error) {
	a := &ahpv1.ArtifactRef{}
	return readInto(a, path, v, "ArtifactRef", []structField{
		reqString("id", &a.Id),
		optString("kind", &a.Kind),
		optString("uri", &a.Uri),
		optString("path", &a.Path),
		optString("mime_type", &a.MimeType),
		optString("sha256", &a.Sha256),
		optUint("size_bytes", u64Type, &a.SizeBytes),
		optString("summary", &a.Summary),
	})
}

func artifactJSON(a *ahpv1.ArtifactRef) map[string]any {
	a = nonNil(a)
	out := map[string]any{"id": a.GetId()}
	putString(out, "kind", a.Kind)
	putString(out, "uri", a.Uri)
	putString(out, "path", a.Path)
	putString(out, "mime_type", a.MimeType)
	putString(out, "sha256", a.Sha256)
	if a.SizeBytes != nil {
		out["size_bytes"] = u64JSON(a.GetSizeBytes())
	}
	putString(out, "summary", a.Summary)
	return out
}

func putEvidence(out map[string]any, evidence []*ahpv1.EvidenceRef) {
	if len(evidence) == 0 {
		return
	}
	list := make([]any, len(evidence))
	for i, e := range evidence {
		j := map[string]any{"kind": e.GetKind(), "summary": e.GetSummary()}
		if e.GetArtifact() != nil {
			j["artifact"] = artifactJSON(e.GetArtifact())
		}
		putMap(j, "metadata", e.GetMetadata())
		list[i] = j
	}
	out["evidence"] = list
}

func putArtifacts(out map[string]any, artifacts []*ahpv1.ArtifactRef) {
	if len(artifacts) == 0 {
		return
	}
	list := make([]any, len(artifacts))
	for i, a := range artifacts {
		list[i] = artifactJSON(a)
	}
	out["artifacts"] = list
}
