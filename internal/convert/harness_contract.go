package convert

// Payloads of the v2.4 run contracts (run_lifecycle, task_list, verification). The reference
// validates them even when they arrive as notifications. Lists marked
// #[serde(default, skip_serializing_if = "Vec::is_empty")] may be absent and are not written when
// empty.

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

func harnessDecodeRunLifecycle(path string, v any) (*ahpv1.RunLifecycle, error) {
	m := &ahpv1.RunLifecycle{}
	err := harnessStruct(path, v, "RunLifecycleEvent", []harnessField{
		harnessReqString("run_id", &m.RunId),
		harnessReqString("session_id", &m.SessionId),
		{name: "status", decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.RunStatus(0).Descriptor())
			m.Status = ahpv1.RunStatus(n)
			return err
		}},
		harnessOptString("prompt", &m.Prompt),
		harnessOptString("result_summary", &m.ResultSummary),
		harnessOptString("error", &m.Error),
		harnessOptString("started_at", &m.StartedAt),
		harnessReqString("updated_at", &m.UpdatedAt),
		harnessOptMap("metadata", &m.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessRunLifecycleJSON(m *ahpv1.RunLifecycle, _ harnessEnc) (map[string]any, error) {
	status, err := harnessEnumName("status", m.GetStatus())
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"run_id":     m.GetRunId(),
		"session_id": m.GetSessionId(),
		"status":     status,
		"updated_at": m.GetUpdatedAt(),
	}
	harnessPutString(out, "prompt", m.Prompt)
	harnessPutString(out, "result_summary", m.ResultSummary)
	harnessPutString(out, "error", m.Error)
	harnessPutString(out, "started_at", m.StartedAt)
	harnessPutMap(out, "metadata", m.GetMetadata())
	return out, nil
}

func harnessDecodeTaskList(path string, v any) (*ahpv1.TaskList, error) {
	m := &ahpv1.TaskList{}
	err := harnessStruct(path, v, "TaskListEvent", []harnessField{
		harnessReqString("run_id", &m.RunId),
		harnessReqString("session_id", &m.SessionId),
		{name: "tasks", decode: func(p string, v any) error {
			m.Tasks = []*ahpv1.TaskItem{}
			return harnessSeq(p, v, func(p string, v any) error {
				t, err := harnessDecodeTaskItem(p, v)
				m.Tasks = append(m.Tasks, t)
				return err
			})
		}},
		harnessReqString("updated_at", &m.UpdatedAt),
		harnessOptMap("metadata", &m.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessTaskListJSON(m *ahpv1.TaskList, _ harnessEnc) (map[string]any, error) {
	tasks := []any{}
	for i, t := range m.GetTasks() {
		j, err := harnessTaskItemJSON(indexPath("tasks", i), t)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, j)
	}
	out := map[string]any{
		"run_id":     m.GetRunId(),
		"session_id": m.GetSessionId(),
		"tasks":      tasks,
		"updated_at": m.GetUpdatedAt(),
	}
	harnessPutMap(out, "metadata", m.GetMetadata())
	return out, nil
}

func harnessDecodeTaskItem(path string, v any) (*ahpv1.TaskItem, error) {
	t := &ahpv1.TaskItem{}
	err := harnessStruct(path, v, "TaskItem", []harnessField{
		harnessReqString("id", &t.Id),
		harnessReqString("title", &t.Title),
		{name: "status", decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.TaskStatus(0).Descriptor())
			t.Status = ahpv1.TaskStatus(n)
			return err
		}},
		harnessDefaultStrings("depends_on", &t.DependsOn),
		harnessDefaultEvidence("evidence", &t.Evidence),
		harnessDefaultArtifacts("artifacts", &t.Artifacts),
		harnessOptString("error", &t.Error),
		harnessOptString("updated_at", &t.UpdatedAt),
		harnessOptMap("metadata", &t.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func harnessTaskItemJSON(path string, t *ahpv1.TaskItem) (map[string]any, error) {
	t = harnessNonNil(t)
	status, err := harnessEnumName(joinPath(path, "status"), t.GetStatus())
	if err != nil {
		return nil, err
	}
	out := map[string]any{"id": t.GetId(), "title": t.GetTitle(), "status": status}
	if len(t.GetDependsOn()) > 0 {
		out["depends_on"] = harnessStringsJSON(t.GetDependsOn())
	}
	harnessPutEvidence(out, t.GetEvidence())
	harnessPutArtifacts(out, t.GetArtifacts())
	harnessPutString(out, "error", t.Error)
	harnessPutString(out, "updated_at", t.UpdatedAt)
	harnessPutMap(out, "metadata", t.GetMetadata())
	return out, nil
}

func harnessDecodeVerification(path string, v any) (*ahpv1.Verification, error) {
	m := &ahpv1.Verification{}
	err := harnessStruct(path, v, "VerificationEvent", []harnessField{
		harnessReqString("run_id", &m.RunId),
		harnessReqString("session_id", &m.SessionId),
		{name: "status", decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.VerificationStatus(0).Descriptor())
			m.Status = ahpv1.VerificationStatus(n)
			return err
		}},
		{name: "checks", optional: true, defaulted: true, decode: func(p string, v any) error {
			return harnessSeq(p, v, func(p string, v any) error {
				c, err := harnessDecodeCheck(p, v)
				m.Checks = append(m.Checks, c)
				return err
			})
		}},
		harnessDefaultStrings("residual_risks", &m.ResidualRisks),
		harnessReqString("updated_at", &m.UpdatedAt),
		harnessOptMap("metadata", &m.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessVerificationJSON(m *ahpv1.Verification, _ harnessEnc) (map[string]any, error) {
	status, err := harnessEnumName("status", m.GetStatus())
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"run_id":     m.GetRunId(),
		"session_id": m.GetSessionId(),
		"status":     status,
		"updated_at": m.GetUpdatedAt(),
	}
	if len(m.GetChecks()) > 0 {
		checks := []any{}
		for i, c := range m.GetChecks() {
			j, err := harnessCheckJSON(indexPath("checks", i), c)
			if err != nil {
				return nil, err
			}
			checks = append(checks, j)
		}
		out["checks"] = checks
	}
	if len(m.GetResidualRisks()) > 0 {
		out["residual_risks"] = harnessStringsJSON(m.GetResidualRisks())
	}
	harnessPutMap(out, "metadata", m.GetMetadata())
	return out, nil
}

func harnessDecodeCheck(path string, v any) (*ahpv1.VerificationCheck, error) {
	c := &ahpv1.VerificationCheck{}
	err := harnessStruct(path, v, "VerificationCheck", []harnessField{
		harnessReqString("id", &c.Id),
		harnessReqString("subject", &c.Subject),
		{name: "status", decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.VerificationStatus(0).Descriptor())
			c.Status = ahpv1.VerificationStatus(n)
			return err
		}},
		harnessOptString("command", &c.Command),
		harnessOptString("message", &c.Message),
		harnessDefaultEvidence("evidence", &c.Evidence),
		harnessDefaultArtifacts("artifacts", &c.Artifacts),
		harnessOptMap("metadata", &c.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func harnessCheckJSON(path string, c *ahpv1.VerificationCheck) (map[string]any, error) {
	c = harnessNonNil(c)
	status, err := harnessEnumName(joinPath(path, "status"), c.GetStatus())
	if err != nil {
		return nil, err
	}
	out := map[string]any{"id": c.GetId(), "subject": c.GetSubject(), "status": status}
	harnessPutString(out, "command", c.Command)
	harnessPutString(out, "message", c.Message)
	harnessPutEvidence(out, c.GetEvidence())
	harnessPutArtifacts(out, c.GetArtifacts())
	harnessPutMap(out, "metadata", c.GetMetadata())
	return out, nil
}

// harnessDefaultEvidence is a Vec<EvidenceRef> with #[serde(default)].
func harnessDefaultEvidence(name string, dst *[]*ahpv1.EvidenceRef) harnessField {
	return harnessField{name: name, optional: true, defaulted: true, decode: func(p string, v any) error {
		return harnessSeq(p, v, func(p string, v any) error {
			e := &ahpv1.EvidenceRef{}
			err := harnessStruct(p, v, "EvidenceRef", []harnessField{
				harnessReqString("kind", &e.Kind),
				harnessReqString("summary", &e.Summary),
				{name: "artifact", optional: true, decode: func(p string, v any) (err error) {
					if v != nil {
						e.Artifact, err = harnessDecodeArtifact(p, v)
					}
					return err
				}},
				harnessOptMap("metadata", &e.Metadata),
			})
			*dst = append(*dst, e)
			return err
		})
	}}
}

// harnessDefaultArtifacts is a Vec<ArtifactRef> with #[serde(default)].
func harnessDefaultArtifacts(name string, dst *[]*ahpv1.ArtifactRef) harnessField {
	return harnessField{name: name, optional: true, defaulted: true, decode: func(p string, v any) error {
		return harnessSeq(p, v, func(p string, v any) error {
			a, err := harnessDecodeArtifact(p, v)
			*dst = append(*dst, a)
			return err
		})
	}}
}

func harnessDecodeArtifact(path string, v any) (*ahpv1.ArtifactRef, error) {
	a := &ahpv1.ArtifactRef{}
	err := harnessStruct(path, v, "ArtifactRef", []harnessField{
		harnessReqString("id", &a.Id),
		harnessOptString("kind", &a.Kind),
		harnessOptString("uri", &a.Uri),
		harnessOptString("path", &a.Path),
		harnessOptString("mime_type", &a.MimeType),
		harnessOptString("sha256", &a.Sha256),
		harnessOptUint("size_bytes", harnessU64, &a.SizeBytes),
		harnessOptString("summary", &a.Summary),
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

func harnessArtifactJSON(a *ahpv1.ArtifactRef) map[string]any {
	a = harnessNonNil(a)
	out := map[string]any{"id": a.GetId()}
	harnessPutString(out, "kind", a.Kind)
	harnessPutString(out, "uri", a.Uri)
	harnessPutString(out, "path", a.Path)
	harnessPutString(out, "mime_type", a.MimeType)
	harnessPutString(out, "sha256", a.Sha256)
	if a.SizeBytes != nil {
		out["size_bytes"] = harnessU64JSON(a.GetSizeBytes())
	}
	harnessPutString(out, "summary", a.Summary)
	return out
}

func harnessPutEvidence(out map[string]any, evidence []*ahpv1.EvidenceRef) {
	if len(evidence) == 0 {
		return
	}
	list := make([]any, len(evidence))
	for i, e := range evidence {
		j := map[string]any{"kind": e.GetKind(), "summary": e.GetSummary()}
		if e.GetArtifact() != nil {
			j["artifact"] = harnessArtifactJSON(e.GetArtifact())
		}
		harnessPutMap(j, "metadata", e.GetMetadata())
		list[i] = j
	}
	out["evidence"] = list
}

func harnessPutArtifacts(out map[string]any, artifacts []*ahpv1.ArtifactRef) {
	if len(artifacts) == 0 {
		return
	}
	list := make([]any, len(artifacts))
	for i, a := range artifacts {
		list[i] = harnessArtifactJSON(a)
	}
	out["artifacts"] = list
}
