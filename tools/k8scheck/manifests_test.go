package k8scheck

import (
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Names the manifests and the docs (docs/kubernetes.md) agree on.
const (
	serverName      = "ahp-server" // Deployment, Service, HPA, PDB, NetworkPolicy, ServiceAccount
	serverContainer = "ahp-server" // container in the server pod
	portName        = "grpc"       // the one serving port (Connect, gRPC, gRPC-Web over HTTP/1.1 + h2c)
	policyConfigMap = "ahp-policy" // generated with disableNameSuffixHash
	bridgeBinary    = "ahp-jsonrpc-bridge"
	agentContainer  = "agent"
	clientLabel     = "ahp-gateway/client" // pods with this label = "true" may reach the server
	nonrootUID      = int64(65532)         // distroless "nonroot"
	serverShutdownS = 15                   // the server's graceful shutdown bound (internal/server)
)

// TestStrictDecodingRejectsMistakes proves the decoder is strict, so a pass of the other tests means
// something: unknown fields, duplicate fields and wrong types are all errors.
func TestStrictDecodingRejectsMistakes(t *testing.T) {
	const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n"
	cases := map[string]string{
		"unknown field":   head + "  replicaz: 2\n",
		"wrong type":      head + "  replicas: two\n",
		"duplicate field": head + "  replicas: 1\n  replicas: 2\n",
		"nested unknown":  head + "  template:\n    spec:\n      containers:\n        - name: c\n          image: i\n          readinessprobe: {}\n",
		"unknown kind":    "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: x}\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeStrict([]byte(doc)); err == nil {
				t.Fatalf("decoded without error:\n%s", doc)
			} else {
				t.Logf("rejected as expected: %v", err)
			}
		})
	}
	good := head + "  replicas: 2\n  selector: {matchLabels: {a: b}}\n---\n# only a comment\n---\n"
	objs, err := DecodeStrict([]byte(good))
	if err != nil || len(objs) != 1 {
		t.Fatalf("valid stream: got %d objects, error %v", len(objs), err)
	}
	if d, ok := objs[0].Obj.(*appsv1.Deployment); !ok || *d.Spec.Replicas != 2 {
		t.Fatalf("decoded %#v", objs[0].Obj)
	}
}

// TestKustomizationsListEveryManifest catches a manifest added to a directory but not to its
// kustomization's resources (it would silently not be deployed).
func TestKustomizationsListEveryManifest(t *testing.T) {
	for _, rel := range []string{"base", "overlays/sidecar", "overlays/cluster", "overlays/audit-pvc"} {
		dir := filepath.Join(repoRoot(t), "docker", "k8s", rel)
		data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			Resources          []string `json:"resources"`
			ConfigMapGenerator []struct {
				Files []string `json:"files"`
			} `json:"configMapGenerator"`
			Patches []struct {
				Path string `json:"path"`
			} `json:"patches"`
		}
		if err := yaml.Unmarshal(data, &k); err != nil {
			t.Fatalf("%s/kustomization.yaml: %v", rel, err)
		}
		used := map[string]bool{"kustomization.yaml": true, "policy_test.yaml": true}
		var patches struct {
			Patches []struct {
				Path string `json:"path"`
			} `json:"patches"`
		}
		if err := yaml.Unmarshal(data, &patches); err != nil {
			t.Fatalf("%s/kustomization.yaml: %v", rel, err)
		}
		for _, p := range patches.Patches {
			used[p.Path] = true
		}
		for _, r := range k.Resources {
			used[r] = true
		}
		for _, g := range k.ConfigMapGenerator {
			for _, f := range g.Files {
				_, file, named := strings.Cut(f, "=") // "key=file" names the key
				if !named {
					file = f
				}
				used[file] = true
			}
		}
		for _, p := range k.Patches {
			used[p.Path] = true
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") && !used[e.Name()] {
				t.Errorf("docker/k8s/%s/%s is in neither resources nor a generator of its kustomization.yaml", rel, e.Name())
			}
		}
	}
}

func TestBase(t *testing.T) {
	objs := render(t, "base")
	checkServer(t, objs)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
	}
	want := map[string]int{"ServiceAccount": 1, "ConfigMap": 2, "Service": 1, "Deployment": 1,
		"HorizontalPodAutoscaler": 1, "PodDisruptionBudget": 1, "NetworkPolicy": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("base renders %d %s, want %d", kinds[k], k, n)
		}
	}
	for k := range kinds {
		if _, ok := want[k]; !ok {
			t.Errorf("base renders an unexpected %s", k)
		}
	}
	for _, o := range objs {
		if m, ok := o.Obj.(interface{ GetLabels() map[string]string }); ok && m.GetLabels()["app.kubernetes.io/part-of"] != "ahp-gateway" {
			t.Errorf("%v: no app.kubernetes.io/part-of=ahp-gateway label", o)
		}
	}
}

// TestClusterOverlay checks the NATS JetStream overlay: a three-node StatefulSet on PVCs behind
// a headless Service, a PDB that keeps a RAFT majority, limits, hardening, and ahp-server pointed
// at the client Service and allowed to reach it.
func TestClusterOverlay(t *testing.T) {
	objs := render(t, "overlays/cluster")
	checkServer(t, objs) // the server as in the base, plus the cluster settings checked below
	sts := only[*appsv1.StatefulSet](t, objs, "nats")
	headless := only[*corev1.Service](t, objs, sts.Spec.ServiceName)
	client := only[*corev1.Service](t, objs, "nats")
	pdb := only[*policyv1.PodDisruptionBudget](t, objs, "nats")
	podLabels := sts.Spec.Template.Labels
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 3 {
		t.Errorf("nats replicas = %v, want 3", deref(sts.Spec.Replicas))
	}
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s must be headless and publish not-ready addresses (routes form the cluster)", headless.Name)
	}
	for _, svc := range []*corev1.Service{headless, client} {
		if !selects(t, labelSelector(svc.Spec.Selector), podLabels) {
			t.Errorf("Service %s does not select the NATS pods", svc.Name)
		}
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().IsZero() {
		t.Error("NATS needs one volumeClaimTemplate with a storage request (JetStream file storage)")
	}
	if !selects(t, pdb.Spec.Selector, podLabels) || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 2 {
		t.Errorf("PDB nats: want minAvailable 2 over the NATS pods, got %v", pdb.Spec.MinAvailable)
	}
	// The claim templates become volumes of each pod.
	pod := *sts.Spec.Template.Spec.DeepCopy()
	for _, vct := range sts.Spec.VolumeClaimTemplates {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: vct.Name,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: vct.Name}}})
	}
	spec := &pod
	checkHardening(t, "StatefulSet nats", spec, nonrootUID)
	nats := container(t, spec, "nats")
	checkResources(t, "StatefulSet nats", nats)
	if !strings.Contains(path.Base(nats.Image), ":") {
		t.Errorf("nats image %q: want an explicit tag", nats.Image)
	}

	dep := only[*appsv1.Deployment](t, objs, serverName)
	server := container(t, podSpecOf(dep), serverContainer)
	natsURL, ok := envValue(server, "AHP_NATS_URL")
	u, err := url.Parse(natsURL)
	if !ok || err != nil || u.Hostname() != client.Name || u.Port() != "4222" {
		t.Errorf("AHP_NATS_URL = %q, want nats://%s:4222", natsURL, client.Name)
	}
	if _, ok := envValue(server, "AHP_CONFIG"); !ok {
		t.Error("AHP_CONFIG not set: the cluster block (replicas, failure mode) lives in the config file")
	}
	allowed := false
	for _, np := range all[*networkingv1.NetworkPolicy](objs) {
		if !selects(t, &np.Spec.PodSelector, dep.Spec.Template.Labels) {
			continue
		}
		for _, e := range np.Spec.Egress {
			for _, to := range e.To {
				if to.PodSelector != nil && selects(t, to.PodSelector, podLabels) {
					allowed = true
				}
			}
		}
	}
	if !allowed {
		t.Error("no NetworkPolicy lets ahp-server reach the NATS pods")
	}
}

func TestSidecarOverlay(t *testing.T) {
	objs := render(t, "overlays/sidecar")
	checkServer(t, objs) // the overlay deploys the base unchanged
	checkSidecar(t, objs)
}

// checkServer asserts the server's Deployment, Service, ConfigMap, HPA, PDB and NetworkPolicy.
func checkServer(t *testing.T, objs []Object) {
	dep := only[*appsv1.Deployment](t, objs, serverName)
	svc := only[*corev1.Service](t, objs, serverName)
	cm := only[*corev1.ConfigMap](t, objs, policyConfigMap)
	hpa := only[*autoscalingv2.HorizontalPodAutoscaler](t, objs, serverName)
	pdb := only[*policyv1.PodDisruptionBudget](t, objs, serverName)
	np := only[*networkingv1.NetworkPolicy](t, objs, serverName)
	spec := podSpecOf(dep)
	podLabels := dep.Spec.Template.Labels
	c := container(t, spec, serverContainer)
	port := containerPort(t, c, portName)

	t.Run("deployment", func(t *testing.T) {
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
			t.Errorf("replicas = %v, want 2", deref(dep.Spec.Replicas))
		}
		if !selects(t, dep.Spec.Selector, podLabels) {
			t.Errorf("selector %v does not select the pod template's labels %v", dep.Spec.Selector, podLabels)
		}
		if c.Image == "" || !strings.Contains(path.Base(c.Image), ":") {
			t.Errorf("image %q: want an explicit tag", c.Image)
		}
		if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
			t.Error("enableServiceLinks must be false: service links inject AHP_SERVER_* variables and the server reads AHP_*")
		}
		if len(c.Command) > 0 {
			bins := dockerfileRuntimeBinaries(t)
			if want := bins[serverName]; c.Command[0] != want {
				t.Errorf("command %v overrides the image's entrypoint with something other than %s (%q)", c.Command, serverName, want)
			}
		}
		if spec.ServiceAccountName != "" {
			only[*corev1.ServiceAccount](t, objs, spec.ServiceAccountName)
		}
	})

	t.Run("listen address", func(t *testing.T) {
		addr, ok := envValue(c, "AHP_ADDR")
		if !ok {
			t.Fatal("AHP_ADDR not set: the server's default 127.0.0.1:8080 is unreachable from outside the pod")
		}
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("AHP_ADDR %q: %v", addr, err)
		}
		if host != "0.0.0.0" && host != "" && host != "::" {
			t.Errorf("AHP_ADDR %q: want all interfaces (0.0.0.0)", addr)
		}
		if p != strconv.Itoa(int(port)) {
			t.Errorf("AHP_ADDR port %s, container port %s is %d", p, portName, port)
		}
	})

	t.Run("probes", func(t *testing.T) {
		for name, pr := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
			switch {
			case pr == nil:
				t.Errorf("%s missing", name)
			case pr.GRPC == nil || pr.HTTPGet != nil || pr.TCPSocket != nil || pr.Exec != nil:
				t.Errorf("%s: want a grpc probe (grpc.health.v1.Health), got %+v", name, pr.ProbeHandler)
			case pr.GRPC.Port != port:
				t.Errorf("%s: grpc port %d, the serving port is %d", name, pr.GRPC.Port, port)
			case pr.GRPC.Service != nil && *pr.GRPC.Service != "":
				t.Errorf("%s: service %q; the server's overall status is the empty service name", name, *pr.GRPC.Service)
			}
		}
	})

	t.Run("shutdown", func(t *testing.T) {
		sleep := int64(0)
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
			ps := c.Lifecycle.PreStop
			if ps.Sleep == nil {
				t.Error("preStop: only the sleep action works in the image (no shell)")
			} else {
				sleep = ps.Sleep.Seconds
			}
		}
		grace := int64(30) // the Kubernetes default
		if spec.TerminationGracePeriodSeconds != nil {
			grace = *spec.TerminationGracePeriodSeconds
		}
		if grace <= sleep+serverShutdownS {
			t.Errorf("terminationGracePeriodSeconds %d must exceed preStop sleep %d + the server's %d s shutdown", grace, sleep, serverShutdownS)
		}
	})

	t.Run("security", func(t *testing.T) {
		checkHardening(t, "Deployment "+serverName, spec, nonrootUID)
	})

	t.Run("policy configmap mounted as a directory", func(t *testing.T) {
		var vol *corev1.Volume
		for i := range spec.Volumes {
			if v := &spec.Volumes[i]; v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
				vol = v
			}
		}
		if vol == nil {
			t.Fatalf("no volume of ConfigMap %q (a generated name with a hash suffix would show here)", cm.Name)
		}
		if len(vol.ConfigMap.Items) != 0 {
			t.Errorf("volume %s selects items; mount the whole ConfigMap", vol.Name)
		}
		if vol.ConfigMap.Optional != nil && *vol.ConfigMap.Optional {
			t.Errorf("volume %s: the policy must not be optional", vol.Name)
		}
		policy, ok := envValue(c, "AHP_POLICY")
		if !ok {
			t.Fatal("AHP_POLICY not set")
		}
		var mount *corev1.VolumeMount
		for i := range c.VolumeMounts {
			if c.VolumeMounts[i].Name == vol.Name {
				mount = &c.VolumeMounts[i]
			}
		}
		if mount == nil {
			t.Fatalf("volume %s is not mounted in %s", vol.Name, c.Name)
		}
		if mount.SubPath != "" || mount.SubPathExpr != "" {
			t.Errorf("mount %s uses subPath: ConfigMap updates never reach a subPath mount", mount.Name)
		}
		if !mount.ReadOnly {
			t.Errorf("mount %s should be readOnly", mount.Name)
		}
		dir, key := path.Split(policy)
		if path.Clean(dir) != path.Clean(mount.MountPath) {
			t.Errorf("AHP_POLICY %q is not directly inside the mount %q", policy, mount.MountPath)
		}
		if strings.TrimSpace(cm.Data[key]) == "" {
			t.Errorf("ConfigMap %s has no key %q (AHP_POLICY %q); keys: %v", cm.Name, key, policy, mapKeys(cm.Data))
		}
		if poll, ok := envValue(c, "AHP_POLICY_POLL"); ok && (poll == "0" || strings.HasPrefix(poll, "0s")) {
			t.Errorf("AHP_POLICY_POLL=%s disables hot reload", poll)
		}
	})

	t.Run("writable emptyDir", func(t *testing.T) {
		found := false
		for _, m := range c.VolumeMounts {
			if v := volume(spec, m.Name); v != nil && v.EmptyDir != nil && !m.ReadOnly && m.MountPath != "/tmp" {
				found = true
				if v.EmptyDir.SizeLimit == nil {
					t.Errorf("emptyDir %s has no sizeLimit", v.Name)
				}
			}
		}
		if !found {
			t.Error("no writable emptyDir for data (the root filesystem is read-only)")
		}
	})

	t.Run("spread across nodes", func(t *testing.T) {
		ok := false
		for _, tsc := range spec.TopologySpreadConstraints {
			if tsc.TopologyKey == "kubernetes.io/hostname" && selects(t, tsc.LabelSelector, podLabels) {
				ok = true
			}
		}
		if a := spec.Affinity; a != nil && a.PodAntiAffinity != nil {
			for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				ok = ok || (term.TopologyKey == "kubernetes.io/hostname" && selects(t, term.LabelSelector, podLabels))
			}
			for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				ok = ok || (w.PodAffinityTerm.TopologyKey == "kubernetes.io/hostname" && selects(t, w.PodAffinityTerm.LabelSelector, podLabels))
			}
		}
		if !ok {
			t.Error("no topology spread constraint or pod anti-affinity across kubernetes.io/hostname selecting the server pods")
		}
	})

	t.Run("secret references are optional and no secret values are shipped", func(t *testing.T) {
		refs := 0
		for _, cc := range allContainers(spec) {
			for _, ef := range cc.EnvFrom {
				if ef.SecretRef != nil {
					refs++
					if ef.SecretRef.Optional == nil || !*ef.SecretRef.Optional {
						t.Errorf("envFrom Secret %q must be optional: true", ef.SecretRef.Name)
					}
				}
			}
			for _, e := range cc.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					refs++
					if r := e.ValueFrom.SecretKeyRef; r.Optional == nil || !*r.Optional {
						t.Errorf("env %s from Secret %q must be optional: true", e.Name, r.Name)
					}
				}
			}
		}
		if refs == 0 {
			t.Error("no Secret reference for tokens (envFrom secretRef or secretKeyRef)")
		}
		for _, s := range all[*corev1.Secret](objs) {
			if len(s.Data) > 0 || len(s.StringData) > 0 {
				t.Errorf("Secret %s ships values in the manifests", s.Name)
			}
		}
	})

	t.Run("service", func(t *testing.T) {
		if len(svc.Spec.Selector) == 0 || !selects(t, labelSelector(svc.Spec.Selector), podLabels) {
			t.Errorf("selector %v does not select the server pods %v", svc.Spec.Selector, podLabels)
		}
		var sp *corev1.ServicePort
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if (p.TargetPort.Type == intstr.String && p.TargetPort.StrVal == portName) ||
				(p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal == port) ||
				(p.TargetPort.IntVal == 0 && p.TargetPort.StrVal == "" && p.Port == port) {
				sp = p
			}
		}
		if sp == nil {
			t.Fatalf("no Service port targets container port %s (%d)", portName, port)
		}
		if sp.Name != "grpc" && sp.Name != "h2c" {
			t.Errorf("service port name %q, want grpc or h2c", sp.Name)
		}
		if sp.AppProtocol == nil || *sp.AppProtocol != "kubernetes.io/h2c" {
			t.Errorf("service port appProtocol %v, want kubernetes.io/h2c", deref(sp.AppProtocol))
		}
		if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
			t.Errorf("service port protocol %s", sp.Protocol)
		}
	})

	t.Run("hpa", func(t *testing.T) {
		ref := hpa.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.Name != dep.Name || ref.APIVersion != "apps/v1" {
			t.Errorf("scaleTargetRef %+v, want apps/v1 Deployment %s", ref, dep.Name)
		}
		if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 2 {
			t.Errorf("minReplicas %v, want at least 2", deref(hpa.Spec.MinReplicas))
		} else if dep.Spec.Replicas != nil && *hpa.Spec.MinReplicas != *dep.Spec.Replicas {
			t.Errorf("minReplicas %d differs from the Deployment's replicas %d: each apply would fight the HPA", *hpa.Spec.MinReplicas, *dep.Spec.Replicas)
		}
		if hpa.Spec.MinReplicas != nil && hpa.Spec.MaxReplicas < *hpa.Spec.MinReplicas {
			t.Errorf("maxReplicas %d < minReplicas %d", hpa.Spec.MaxReplicas, *hpa.Spec.MinReplicas)
		}
		cpu := false
		for _, m := range hpa.Spec.Metrics {
			if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
				m.Resource.Target.Type == autoscalingv2.UtilizationMetricType && m.Resource.Target.AverageUtilization != nil {
				cpu = true
			}
		}
		if !cpu {
			t.Error("no CPU utilization metric")
		}
	})

	t.Run("pdb", func(t *testing.T) {
		want := intstr.FromInt32(1)
		if pdb.Spec.MinAvailable == nil || *pdb.Spec.MinAvailable != want {
			t.Errorf("minAvailable %v, want 1", deref(pdb.Spec.MinAvailable))
		}
		if pdb.Spec.MaxUnavailable != nil {
			t.Error("both minAvailable and maxUnavailable set")
		}
		if !selects(t, pdb.Spec.Selector, podLabels) {
			t.Errorf("selector %v does not select the server pods", pdb.Spec.Selector)
		}
	})

	t.Run("networkpolicy", func(t *testing.T) {
		if !selects(t, &np.Spec.PodSelector, podLabels) {
			t.Errorf("podSelector %v does not select the server pods", np.Spec.PodSelector)
		}
		types := np.Spec.PolicyTypes
		if !slices.Contains(types, networkingv1.PolicyTypeIngress) || !slices.Contains(types, networkingv1.PolicyTypeEgress) {
			t.Errorf("policyTypes %v, want Ingress and Egress", types)
		}
		if len(np.Spec.Ingress) != 1 {
			t.Fatalf("%d ingress rules, want 1", len(np.Spec.Ingress))
		}
		in := np.Spec.Ingress[0]
		if len(in.From) != 1 || in.From[0].PodSelector == nil || in.From[0].IPBlock != nil || in.From[0].NamespaceSelector != nil {
			t.Errorf("ingress from %+v, want only a podSelector", in.From)
		} else if got := in.From[0].PodSelector.MatchLabels; len(got) != 1 || got[clientLabel] != "true" || len(in.From[0].PodSelector.MatchExpressions) != 0 {
			t.Errorf("ingress podSelector %v, want exactly %s=true", got, clientLabel)
		}
		if len(in.Ports) != 1 || in.Ports[0].Port == nil || in.Ports[0].Port.IntValue() != int(port) ||
			(in.Ports[0].Protocol != nil && *in.Ports[0].Protocol != corev1.ProtocolTCP) {
			t.Errorf("ingress ports %+v, want TCP %d only", in.Ports, port)
		}
		if len(np.Spec.Egress) == 0 {
			t.Error("no egress rule: DNS would be blocked")
		}
		for _, e := range np.Spec.Egress {
			if len(e.To) == 0 {
				t.Error("an egress rule allows every destination")
			}
			if len(e.Ports) == 0 {
				t.Error("an egress rule allows every port")
			}
			for _, p := range e.Ports {
				if p.Port == nil || p.Port.IntValue() != 53 {
					t.Errorf("egress port %v: only DNS (53) is expected", p.Port)
				}
			}
		}
	})
}

// checkSidecar asserts the agent Deployment of the sidecar overlay.
func checkSidecar(t *testing.T, objs []Object) {
	server := only[*appsv1.Deployment](t, objs, serverName)
	svc := only[*corev1.Service](t, objs, serverName)
	np := only[*networkingv1.NetworkPolicy](t, objs, serverName)
	serverImage := container(t, podSpecOf(server), serverContainer).Image

	var agentDep *appsv1.Deployment
	var bridge *corev1.Container
	for _, d := range all[*appsv1.Deployment](objs) {
		for _, c := range allContainers(podSpecOf(d)) {
			if len(c.Command) > 0 && path.Base(c.Command[0]) == bridgeBinary {
				agentDep, bridge = d, c
			}
		}
	}
	if agentDep == nil {
		t.Fatalf("no Deployment runs %s", bridgeBinary)
	}
	spec := podSpecOf(agentDep)
	where := "Deployment " + agentDep.Name
	agent := container(t, spec, agentContainer)
	if !slices.ContainsFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == agentContainer }) {
		t.Errorf("%s: %s must be an app container", where, agentContainer)
	}
	if !selects(t, agentDep.Spec.Selector, agentDep.Spec.Template.Labels) {
		t.Errorf("%s: selector does not select its pod template", where)
	}

	t.Run("bridge is a sidecar", func(t *testing.T) {
		for _, ic := range spec.InitContainers {
			if ic.Name == bridge.Name && (ic.RestartPolicy == nil || *ic.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				t.Errorf("%s: init container %s must have restartPolicy: Always (a native sidecar), or it blocks the pod", where, bridge.Name)
			}
		}
		if bridge.Image != serverImage {
			t.Errorf("bridge image %q, server image %q: both binaries ship in one image", bridge.Image, serverImage)
		}
		bins := dockerfileRuntimeBinaries(t)
		if want, ok := bins[bridgeBinary]; !ok {
			t.Errorf("docker/Dockerfile's runtime stage does not COPY %s", bridgeBinary)
		} else if bridge.Command[0] != want {
			t.Errorf("bridge command %q, the Dockerfile installs it at %q", bridge.Command[0], want)
		}
	})

	t.Run("agent pod security", func(t *testing.T) {
		checkHardening(t, where, spec, nonrootUID)
	})

	flags := parseFlags(append(bridge.Command[1:], bridge.Args...))

	t.Run("unix socket on a shared emptyDir", func(t *testing.T) {
		sock := flags["unix"]
		if sock == "" || !path.IsAbs(sock) {
			t.Fatalf("bridge --unix %q: want an absolute socket path", sock)
		}
		if len(sock) > 100 {
			t.Errorf("socket path %q is longer than Unix sockets allow (about 104 bytes)", sock)
		}
		var bm *corev1.VolumeMount
		for i := range bridge.VolumeMounts {
			m := &bridge.VolumeMounts[i]
			if path.Dir(sock) == path.Clean(m.MountPath) {
				bm = m
			}
		}
		if bm == nil {
			t.Fatalf("no bridge volume mount at %s, the socket's directory", path.Dir(sock))
		}
		if bm.ReadOnly {
			t.Errorf("bridge mount %s is read-only; the bridge creates the socket there", bm.Name)
		}
		if v := volume(spec, bm.Name); v == nil || v.EmptyDir == nil {
			t.Errorf("volume %s must be an emptyDir shared by the pod's containers", bm.Name)
		}
		var am *corev1.VolumeMount
		for i := range agent.VolumeMounts {
			if agent.VolumeMounts[i].Name == bm.Name {
				am = &agent.VolumeMounts[i]
			}
		}
		if am == nil {
			t.Fatalf("the agent does not mount volume %s", bm.Name)
		}
		agentSock := path.Join(am.MountPath, path.Base(sock))
		if env, ok := envValue(agent, "AHP_BRIDGE_SOCKET"); ok && env != agentSock {
			t.Errorf("agent AHP_BRIDGE_SOCKET %q, but the socket appears at %q in the agent", env, agentSock)
		}
		if agentSock != sock {
			t.Errorf("the socket is %s in the bridge but %s in the agent; use the same path", sock, agentSock)
		}
		if uid(spec, bridge) != uid(spec, agent) {
			t.Errorf("bridge uid %v, agent uid %v: the socket is mode 0600, so they must match", uid(spec, bridge), uid(spec, agent))
		}
	})

	t.Run("upstream is the Service", func(t *testing.T) {
		u, err := url.Parse(flags["upstream"])
		if err != nil || u.Host == "" {
			t.Fatalf("bridge --upstream %q: %v", flags["upstream"], err)
		}
		if u.Scheme != "http" {
			t.Errorf("--upstream scheme %q: the Service port is cleartext h2c (http)", u.Scheme)
		}
		host := u.Hostname()
		if host != svc.Name && !strings.HasPrefix(host, svc.Name+".") {
			t.Errorf("--upstream host %q is not the Service %s", host, svc.Name)
		}
		portOK := false
		for _, p := range svc.Spec.Ports {
			portOK = portOK || strconv.Itoa(int(p.Port)) == u.Port()
		}
		if !portOK {
			t.Errorf("--upstream port %q is not a port of Service %s", u.Port(), svc.Name)
		}
		if fp := flags["failure-policy"]; fp != "fail-closed" {
			t.Errorf("--failure-policy %q, want fail-closed", fp)
		}
		if ms, err := strconv.Atoi(flags["timeout-ms"]); err != nil || ms < 100 || ms > 30000 {
			t.Errorf("--timeout-ms %q: want 100..30000", flags["timeout-ms"])
		}
	})

	t.Run("networkpolicy admits the agent", func(t *testing.T) {
		admitted := false
		for _, in := range np.Spec.Ingress {
			for _, from := range in.From {
				admitted = admitted || (from.NamespaceSelector == nil && selects(t, from.PodSelector, agentDep.Spec.Template.Labels))
			}
		}
		if !admitted {
			t.Errorf("the server's NetworkPolicy does not admit pods labelled %v (add %s: \"true\")", agentDep.Spec.Template.Labels, clientLabel)
		}
	})
}

func uid(spec *corev1.PodSpec, c *corev1.Container) any {
	if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
		return *c.SecurityContext.RunAsUser
	}
	if spec.SecurityContext != nil && spec.SecurityContext.RunAsUser != nil {
		return *spec.SecurityContext.RunAsUser
	}
	return nil
}

func mapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestAuditPVCOverlay renders the audit-pvc example: the data volume is the claim, and each pod
// writes its own audit directory.
func TestAuditPVCOverlay(t *testing.T) {
	objs := render(t, "overlays/audit-pvc")
	pvc := only[*corev1.PersistentVolumeClaim](t, objs, "ahp-audit")
	dep := only[*appsv1.Deployment](t, objs, serverName)
	spec := podSpecOf(dep)
	v := volume(spec, "data")
	if v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name || v.EmptyDir != nil {
		t.Fatalf("data volume %+v, want the claim %s only", v, pvc.Name)
	}
	c := container(t, spec, serverContainer)
	if p, ok := envValue(c, "AHP_AUDIT_PATH"); !ok || !strings.Contains(p, "$(POD_NAME)") {
		t.Errorf("AHP_AUDIT_PATH = %q, want a directory per pod", p)
	}
}
