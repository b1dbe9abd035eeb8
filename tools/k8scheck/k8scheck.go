// Package k8scheck validates the Kubernetes manifests under docker/k8s without a cluster: it renders
// each kustomization with `kubectl kustomize` (or a standalone `kustomize build`) and decodes every
// object strictly with the client-go scheme, so an unknown field, a duplicate key or a value of the
// wrong type is an error. The tests in this package then assert the deployment's properties
// (docs/kubernetes.md).
//
// It is its own Go module so that the Kubernetes libraries never enter the product's go.mod; the
// root module's `go test ./...` does not descend into it. Run it with scripts/check-k8s.sh.
package k8scheck

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// ErrNoRenderer means neither kubectl nor kustomize is on PATH.
var ErrNoRenderer = errors.New("neither kubectl nor kustomize found on PATH")

// Renderer renders a kustomization directory to a multi-document YAML stream.
type Renderer struct {
	// Name is the command line used, for messages ("kubectl kustomize").
	Name string
	argv []string
}

// FindRenderer prefers `kubectl kustomize` (kustomize is built into kubectl since v1.14) and falls
// back to a standalone `kustomize build`.
func FindRenderer() (*Renderer, error) {
	if p, err := exec.LookPath("kubectl"); err == nil {
		return &Renderer{Name: "kubectl kustomize", argv: []string{p, "kustomize"}}, nil
	}
	if p, err := exec.LookPath("kustomize"); err == nil {
		return &Renderer{Name: "kustomize build", argv: []string{p, "build"}}, nil
	}
	return nil, ErrNoRenderer
}

// Render renders the kustomization in dir.
func (r *Renderer) Render(dir string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.argv[0], append(append([]string(nil), r.argv[1:]...), dir)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// kubectl must not look for a cluster; rendering is offline.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+os.DevNull)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", r.Name, dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Object is one decoded document of a rendered stream.
type Object struct {
	// Index is the document's position in the stream, from 0.
	Index int
	// Kind and Name identify the object in messages.
	Kind, Name string
	// Obj is the typed object (*appsv1.Deployment, *corev1.Service, ...).
	Obj runtime.Object
}

func (o Object) String() string { return fmt.Sprintf("document %d (%s %q)", o.Index, o.Kind, o.Name) }

// strictDecoder decodes into the typed structs registered in client-go's scheme, rejecting unknown
// fields, duplicate fields and wrong types. It neither defaults nor converts.
var strictDecoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// DecodeStrict splits a multi-document YAML stream and strictly decodes every non-empty document.
// All errors are reported, each naming its document.
func DecodeStrict(data []byte) ([]Object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []Object
	var errs []error
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var probe map[string]any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
			continue
		}
		if len(probe) == 0 { // only comments or "---"
			continue
		}
		obj, gvk, err := strictDecoder.Decode(doc, nil, nil)
		if err != nil {
			meta, _ := probe["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			errs = append(errs, fmt.Errorf("document %d (%v %q): %w", i, probe["kind"], name, err))
			continue
		}
		o := Object{Index: i, Kind: gvk.Kind, Obj: obj}
		if m, ok := obj.(interface{ GetName() string }); ok {
			o.Name = m.GetName()
		}
		objs = append(objs, o)
	}
	return objs, errors.Join(errs...)
}
