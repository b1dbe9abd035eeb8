package k8scheck

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// repoRoot is the checkout's root: this package lives in tools/k8scheck. K8SCHECK_ROOT overrides
// it, to check a modified copy (docker/k8s and docker/Dockerfile are read from there).
func repoRoot(t *testing.T) string {
	t.Helper()
	root := os.Getenv("K8SCHECK_ROOT")
	if root == "" {
		root = filepath.Join("..", "..")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "docker", "k8s")); err != nil {
		t.Fatalf("repository root not found from %s: %v", root, err)
	}
	return root
}

var (
	renderCache   = map[string][]Object{}
	renderCacheMu sync.Mutex
)

// render renders and strictly decodes the kustomization in docker/k8s/<rel>. It skips the test when
// no renderer is installed, unless K8SCHECK_REQUIRE_RENDER is set (CI), where that is a failure.
func render(t *testing.T, rel string) []Object {
	t.Helper()
	renderCacheMu.Lock()
	defer renderCacheMu.Unlock()
	if objs, ok := renderCache[rel]; ok {
		return objs
	}
	r, err := FindRenderer()
	if err != nil {
		msg := fmt.Sprintf("cannot render docker/k8s/%s: %v. Install kubectl (kustomize is built in) "+
			"or kustomize to run this check", rel, err)
		if os.Getenv("K8SCHECK_REQUIRE_RENDER") != "" {
			t.Fatal(msg + " (K8SCHECK_REQUIRE_RENDER is set)")
		}
		t.Skip(msg)
	}
	out, err := r.Render(filepath.Join(repoRoot(t), "docker", "k8s", rel))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := DecodeStrict(out)
	if err != nil {
		t.Fatalf("%s docker/k8s/%s: strict decoding failed:\n%v", r.Name, rel, err)
	}
	if len(objs) == 0 {
		t.Fatalf("%s docker/k8s/%s rendered no objects", r.Name, rel)
	}
	renderCache[rel] = objs
	return objs
}

// only returns the single object of type T named name, failing the test if there is not exactly one.
func only[T interface{ GetName() string }](t *testing.T, objs []Object, name string) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.Obj.(T); ok && v.GetName() == name {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("want exactly one %T named %q in the render, found %d", zero, name, len(found))
	}
	return found[0]
}

// all returns every object of type T.
func all[T any](objs []Object) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.Obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// selects reports whether sel selects pods labelled podLabels. A nil or empty selector selects
// nothing here: no manifest of ours should select every pod by accident.
func selects(t *testing.T, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("label selector %v: %v", sel, err)
	}
	return s.Matches(labels.Set(podLabels))
}

// allContainers lists init containers (native sidecars among them) and then app containers.
func allContainers(spec *corev1.PodSpec) []*corev1.Container {
	var out []*corev1.Container
	for i := range spec.InitContainers {
		out = append(out, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		out = append(out, &spec.Containers[i])
	}
	return out
}

func container(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for _, c := range allContainers(spec) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container named %q", name)
	return nil
}

func envValue(c *corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom == nil {
			return e.Value, true
		}
	}
	return "", false
}

func volume(spec *corev1.PodSpec, name string) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

func containerPort(t *testing.T, c *corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				t.Errorf("container %s port %s: protocol %s, want TCP", c.Name, name, p.Protocol)
			}
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %q", c.Name, name)
	return 0
}

// checkHardening asserts the security settings every container of ours must have, taking the
// pod-level security context into account the way the kubelet does.
func checkHardening(t *testing.T, where string, spec *corev1.PodSpec, wantUID int64) {
	t.Helper()
	pod := spec.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken must be false (nothing here calls the Kubernetes API)", where)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Errorf("%s: host namespaces must not be shared", where)
	}
	for _, c := range allContainers(spec) {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s: container %s has no securityContext", where, c.Name)
			continue
		}
		runAsNonRoot := sc.RunAsNonRoot
		if runAsNonRoot == nil {
			runAsNonRoot = pod.RunAsNonRoot
		}
		if runAsNonRoot == nil || !*runAsNonRoot {
			t.Errorf("%s: container %s: runAsNonRoot must be true", where, c.Name)
		}
		uid := sc.RunAsUser
		if uid == nil {
			uid = pod.RunAsUser
		}
		if uid == nil || *uid != wantUID {
			t.Errorf("%s: container %s: runAsUser must be %d (the image's nonroot user), got %v", where, c.Name, wantUID, deref(uid))
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: container %s: readOnlyRootFilesystem must be true", where, c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: container %s: allowPrivilegeEscalation must be false", where, c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s: container %s: privileged", where, c.Name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, corev1.Capability("ALL")) {
			t.Errorf("%s: container %s: capabilities must drop ALL", where, c.Name)
		} else if len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s: container %s: capabilities added: %v", where, c.Name, sc.Capabilities.Add)
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = pod.SeccompProfile
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: container %s: seccompProfile must be RuntimeDefault", where, c.Name)
		}
		checkResources(t, where, c)
		for _, m := range c.VolumeMounts {
			if volume(spec, m.Name) == nil {
				t.Errorf("%s: container %s mounts undeclared volume %q", where, c.Name, m.Name)
			}
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkResources asserts CPU and memory requests and limits, with requests not above limits.
func checkResources(t *testing.T, where string, c *corev1.Container) {
	t.Helper()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := c.Resources.Requests[name]
		lim, hasLim := c.Resources.Limits[name]
		if !hasReq || req.IsZero() {
			t.Errorf("%s: container %s: no %s request", where, c.Name, name)
		}
		if !hasLim || lim.IsZero() {
			t.Errorf("%s: container %s: no %s limit", where, c.Name, name)
		}
		if hasReq && hasLim && req.Cmp(lim) > 0 {
			t.Errorf("%s: container %s: %s request %s above limit %s", where, c.Name, name, req.String(), lim.String())
		}
	}
}

// parseFlags reads "--name value", "--name=value" and "-name value" command-line arguments.
func parseFlags(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name := strings.TrimLeft(a, "-")
		if k, v, ok := strings.Cut(name, "="); ok {
			out[k] = v
			continue
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out[name] = args[i+1]
			i++
		} else {
			out[name] = ""
		}
	}
	return out
}

// dockerfileRuntimeBinaries returns the paths the Dockerfile's final stage installs binaries at,
// keyed by base name: from `COPY --from=... SRC... DEST/` lines.
func dockerfileRuntimeBinaries(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "docker", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{}
	for _, l := range lines {
		fields := strings.Fields(l)
		if len(fields) == 0 {
			continue
		}
		if strings.EqualFold(fields[0], "FROM") {
			bins = map[string]string{} // only the final stage counts
			continue
		}
		if !strings.EqualFold(fields[0], "COPY") {
			continue
		}
		var paths []string
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "--") {
				paths = append(paths, f)
			}
		}
		if len(paths) < 2 {
			continue
		}
		dest := paths[len(paths)-1]
		for _, src := range paths[:len(paths)-1] {
			base := filepath.Base(src)
			if strings.HasSuffix(dest, "/") {
				bins[base] = dest + base
			} else if len(paths) == 2 {
				bins[base] = dest
			}
		}
	}
	return bins
}

func podSpecOf(d *appsv1.Deployment) *corev1.PodSpec { return &d.Spec.Template.Spec }

func labelSelector(m map[string]string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: m}
}
