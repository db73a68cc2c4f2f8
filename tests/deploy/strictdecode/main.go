// strictdecode reads a stream of Kubernetes objects in YAML (what
// `kustomize build` prints) on stdin and decodes each one strictly into the
// Kubernetes API's own Go types, as the API server does with
// fieldValidation=Strict: an unknown or duplicated field, a value of the
// wrong type or a kind the API does not have is an error. It prints one
// line per object, "OK Kind name" or "FAIL Kind name: why", and exits 1 when
// any object failed.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func main() {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme,
		networkingv1.AddToScheme, policyv1.AddToScheme, batchv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, "strictdecode:", err)
			os.Exit(2)
		}
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(os.Stdin))
	failed := false
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "strictdecode: reading the stream:", err)
			os.Exit(2)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		name := ""
		if obj != nil {
			if m, merr := meta.Accessor(obj); merr == nil {
				name = m.GetName()
			}
		}
		kind := ""
		if gvk != nil {
			kind = gvk.Kind
		}
		if err != nil {
			failed = true
			fmt.Printf("FAIL %s %s: %v\n", kind, name, err)
			continue
		}
		fmt.Printf("OK %s %s\n", kind, name)
	}
	if failed {
		os.Exit(1)
	}
}
